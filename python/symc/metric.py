"""mx.metric's evaluation metrics, computed as MXNet 1.9.1 computes them:
accuracy, top-k accuracy, cross-entropy and mean squared error."""
import numpy as np


def _numpy(array):
    return array.asnumpy() if hasattr(array, "asnumpy") else np.asarray(array)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """mx.metric.check_label_shapes: as many labels as predictions."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of predictions {}".format(label_shape, pred_shape))
    if wrap and not isinstance(labels, (list, tuple)):
        labels, preds = [labels], [preds]
    return labels, preds


class EvalMetric:
    """The base: a running sum over instances, reset per epoch (and the
    global one, reset by reset() only)."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names, self.label_names = output_names, label_names
        self.reset()

    def __str__(self):
        return "EvalMetric: {}".format(dict(self.get_name_value()))

    def update_dict(self, label, pred):
        self.update(list(label.values()), list(pred.values()))

    def reset(self):
        self.num_inst = self.global_num_inst = 0
        self.sum_metric = self.global_sum_metric = 0.0

    def reset_local(self):
        self.num_inst, self.sum_metric = 0, 0.0

    def _add(self, value, instances):
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += instances
        self.global_num_inst += instances

    def get(self):
        return (self.name, float("nan") if self.num_inst == 0 else self.sum_metric / self.num_inst)

    def get_global(self):
        return (self.name, float("nan") if self.global_num_inst == 0 else self.global_sum_metric / self.global_num_inst)

    def get_name_value(self):
        name, value = self.get()
        return list(zip(name, value)) if isinstance(name, list) else [(name, value)]


class Accuracy(EvalMetric):
    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        self.axis = axis
        super().__init__(name, output_names, label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _numpy(label), _numpy(pred)
            if pred.shape != label.shape:
                pred = np.argmax(pred, axis=self.axis)
            pred_label = pred.astype("int32").flat
            label = label.astype("int32").flat
            check_label_shapes(label, pred_label)
            self._add((pred_label == label).sum(), len(pred_label))


class TopKAccuracy(EvalMetric):
    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        self.top_k = top_k
        assert self.top_k > 1, "Please use Accuracy if top_k is no more than 1"
        super().__init__(name + "_%d" % top_k, output_names, label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            pred = _numpy(pred).astype("float32")
            assert len(pred.shape) <= 2, "Predictions should be no more than 2 dims"
            pred_label = np.argpartition(pred, -self.top_k)
            label = _numpy(label).astype("int32")
            check_label_shapes(label, pred_label)
            if len(pred_label.shape) == 1:
                self._add((pred_label.flat == label.flat).sum(), 0)
            else:
                num_classes = pred_label.shape[1]
                for j in range(min(num_classes, self.top_k)):
                    self._add((pred_label[:, num_classes - 1 - j].flat == label.flat).sum(), 0)
            self.num_inst += pred_label.shape[0]
            self.global_num_inst += pred_label.shape[0]


class CrossEntropy(EvalMetric):
    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        self.eps = eps
        super().__init__(name, output_names, label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _numpy(label).ravel(), _numpy(pred)
            assert label.shape[0] == pred.shape[0]
            prob = pred[np.arange(label.shape[0]), np.int64(label)]
            self._add((-np.log(prob + self.eps)).sum(), label.shape[0])


class MSE(EvalMetric):
    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _numpy(label), _numpy(pred)
            if len(label.shape) == 1:
                label = label.reshape(label.shape[0], 1)
            if len(pred.shape) == 1:
                pred = pred.reshape(pred.shape[0], 1)
            self._add(((label - pred) ** 2.0).mean(), 1)


class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together."""

    def __init__(self, metrics=None, name="composite", output_names=None, label_names=None):
        self.metrics = [create(m) for m in metrics or []]
        super().__init__(name, output_names, label_names)

    def add(self, metric):
        self.metrics.append(create(metric))

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def get(self):
        names, values = [], []
        for metric in self.metrics:
            name, value = metric.get()
            names.extend(name if isinstance(name, list) else [name])
            values.extend(value if isinstance(value, list) else [value])
        return names, values


_ALIASES = {"acc": Accuracy, "accuracy": Accuracy, "top_k_accuracy": TopKAccuracy, "top_k_acc": TopKAccuracy,
            "ce": CrossEntropy, "cross-entropy": CrossEntropy, "mse": MSE}


def create(metric, *args, **kwargs):
    """mx.metric.create: a metric, a name ('acc', 'top_k_accuracy', 'ce',
    'mse') or a list of them (a CompositeEvalMetric)."""
    if isinstance(metric, EvalMetric):
        return metric
    if isinstance(metric, list):
        return CompositeEvalMetric(metric)
    try:
        return _ALIASES[metric.lower()](*args, **kwargs)
    except KeyError:
        raise ValueError("Metric must be either callable or in {}".format(sorted(_ALIASES))) from None


__all__ = ["Accuracy", "CompositeEvalMetric", "CrossEntropy", "EvalMetric", "MSE", "TopKAccuracy", "create"]
