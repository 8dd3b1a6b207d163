"""MP-BERT4CR citation recommendation (Zhang & Ma, WI-IAT 2021): dynamic context sampling
(:mod:`.context`), multi-positive and negative sampling (:mod:`.samplers`), the hierarchical
manuscript and citation encoders (:mod:`.model`), the triplet and multi-positive triplet
objectives (:mod:`.losses`), the training data (:mod:`.data`) and recipe (:mod:`.train`)."""
