"""Writes the hostile .npy files of hostile-input.test into the directory argv[1]."""
import struct
import sys


def npy(path, dict_text, data=b""):
    dict_text += " " * ((64 - (10 + len(dict_text) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(dict_text)) + dict_text.encode() + data)


def shaped(shape):
    return "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape


out = sys.argv[1]
npy(out + "/long-descr.npy", "{'descr': '" + "<" * 60000 + "', 'fortran_order': False, 'shape': (2,), }")
npy(out + "/twenty-digits.npy", shaped("(12345678901234567890,)"))
npy(out + "/wrapping.npy", shaped("(4611686018427387904, 4)"), b"\0" * 64)
npy(out + "/huge.npy", shaped("(500000000,)"))
npy(out + "/negative.npy", shaped("(-1, 4)"), b"\0" * 16)
