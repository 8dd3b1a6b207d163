"""Experiments, above ``train`` and ``eval``: training runs with the dev evaluators they are
selected on (:mod:`.dev`), grids of runs scored on the SDSM tasks (:mod:`.grid`), and the
fusion weights fitted on the train and dev splits (:mod:`.tune`)."""

from openmsd.experiment.dev import dev_evaluator, prefetch_matrix, train_model

__all__ = ["dev_evaluator", "prefetch_matrix", "train_model"]
