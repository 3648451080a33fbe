"""Training and prediction on a Dask cluster (``pip install '.[dask]' in snowpy's source folder``).

:func:`fit` trains a :class:`~snowpy.SnowClassifier` by iterative parameter
mixing over shards that the workers read and featurise themselves;
:func:`predict` writes a model's predictions for a corpus, partition by
partition, where the partitions lie. ``docs/distributed.md`` has the design
and the measurements. Nothing else in snowpy imports Dask.
"""

from snowpy.distributed.mixing import MIXING, Mixture
from snowpy.distributed.prediction import evaluate, predict
from snowpy.distributed.shards import Reading
from snowpy.distributed.training import RoundReport, fit

__all__ = ["MIXING", "Mixture", "Reading", "RoundReport", "evaluate", "fit", "predict"]
