"""MP-BERT4CR citation recommendation (Zhang & Ma, WI-IAT 2021) at inference: dynamic context
sampling (:mod:`.context`), the hierarchical manuscript and citation encoders (:mod:`.model`),
sentence splitting (:mod:`.sentences`) and citation markers (:mod:`.markers`). Its training
(samplers, losses, data, the trainer) is :mod:`openmsd.train.citrec`."""
