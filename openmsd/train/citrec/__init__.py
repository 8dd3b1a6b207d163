"""MP-BERT4CR's training (Zhang & Ma, WI-IAT 2021): multi-positive and negative sampling
(:mod:`.samplers`), the triplet and multi-positive triplet objectives (:mod:`.losses`) and the
trainer (:mod:`.train`); its data and ranking stages are :mod:`openmsd.rank.citrec`'s. The
model it trains is :mod:`openmsd.models.citrec`."""
