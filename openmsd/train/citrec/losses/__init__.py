"""The objectives of MP-BERT4CR (§4.1.5), one per module, sentence-transformers style: the
paper's hinge losses (:data:`LOSSES`) and an in-batch multi-positive InfoNCE
(:class:`ContrastiveLoss`, added to them with ``contrastive_weight``).

>>> sorted(LOSSES)
['mpt-src', 'mpt-src-tgt', 'mpt-tgt', 'triplet']
"""

from openmsd.train.citrec.losses.base import MultiPositiveTriplet
from openmsd.train.citrec.losses.contrastive import ContrastiveLoss
from openmsd.train.citrec.losses.mpt_src import MPTSrcLoss
from openmsd.train.citrec.losses.mpt_src_tgt import MPTSrcTgtLoss
from openmsd.train.citrec.losses.mpt_tgt import MPTTgtLoss
from openmsd.train.citrec.losses.triplet import TripletLoss

LOSSES: dict[str, type[MultiPositiveTriplet]] = {
    "triplet": TripletLoss, "mpt-tgt": MPTTgtLoss, "mpt-src": MPTSrcLoss,
    "mpt-src-tgt": MPTSrcTgtLoss}

__all__ = ["LOSSES", "ContrastiveLoss", "MPTSrcLoss", "MPTSrcTgtLoss", "MPTTgtLoss",
           "MultiPositiveTriplet", "TripletLoss"]
