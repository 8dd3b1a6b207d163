"""MP-BERT4CR's training (Zhang & Ma, WI-IAT 2021): multi-positive and negative sampling
(:mod:`.samplers`), the triplet and multi-positive triplet objectives (:mod:`.losses`), the
training data (:mod:`.data`) and the trainer (:mod:`.train`). The model it trains is
:mod:`openmsd.models.citrec`."""
