"""Connected components and one-to-one matching on Spark DataFrames, without GraphFrames.

Components: the alternating large-star / small-star algorithm (Kiveris et al., "Connected
Components in MapReduce and Beyond", 2014). Each round rewires every edge towards smaller
nodes while keeping the components; it stops when the edges form stars, each centred on
its component's smallest node, which is then every member's label. It needs O(log² n) rounds
where plain label propagation needs as many as the longest path (a chain of a thousand
records, a thousand rounds). Each round is checkpointed so the plan does not grow.

Cluster ids are then numbered as `linkage.clustering.connected_components` numbers them: by
each cluster's smallest row, 0, 1, 2 ...
"""

from __future__ import annotations

import numpy as np

from linkage.engines.spark._frames import pinned
from linkage.errors import LinkageError

MAX_ROUNDS = 200  # far above what O(log² n) needs for any table that fits a cluster


def _oriented(edges):
    """Undirected edges as (p, c) with p < c, without self-loops and repeats."""
    from pyspark.sql import functions as F

    return (edges.select(F.least("a", "b").alias("p"), F.greatest("a", "b").alias("c"))
            .where(F.col("p") != F.col("c")).distinct())


def _large_star(edges):
    """Each node's larger neighbours are reattached to the smallest node it sees (itself or a
    neighbour). A window (one shuffle) rather than a groupBy and a join (two)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    both = edges.select(F.col("p").alias("x"), F.col("c").alias("y")).unionByName(
        edges.select(F.col("c").alias("x"), F.col("p").alias("y")))
    smallest = F.least(F.col("x"), F.min("y").over(Window.partitionBy("x")))
    # Repeated edges are left for the small star's `distinct`: one shuffle less per round.
    return (both.withColumn("m", smallest).where(F.col("y") > F.col("x"))
            .select(F.col("m").alias("p"), F.col("y").alias("c")))


def _small_star(edges):
    """Each node and its smaller neighbours are reattached to the smallest of them."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    with_min = edges.withColumn("m", F.min("p").over(Window.partitionBy("c")))
    members = with_min.select(F.col("m").alias("p"), F.col("p").alias("c"))
    centres = with_min.select(F.col("m").alias("p"), F.col("c"))
    return members.unionByName(centres).where(F.col("p") != F.col("c")).distinct()


def _is_star_forest(edges) -> bool:
    """Whether every child (larger end) has one parent and no parent is a child: then each
    component is a star around its smallest node."""
    from pyspark.sql import functions as F

    roles = edges.select(F.col("c").alias("node"), F.lit(1).alias("child"),
                         F.lit(0).alias("parent")).unionByName(
        edges.select(F.col("p").alias("node"), F.lit(0).alias("child"),
                     F.lit(1).alias("parent")))
    bad = roles.groupBy("node").agg(F.sum("child").alias("nc"), F.max("parent").alias("np")) \
        .where((F.col("nc") > 1) | ((F.col("nc") >= 1) & (F.col("np") == 1)))
    return bad.count() == 0  # one job; `limit(1)` can take several


def component_labels(edges):
    """(node, label) for every node of `edges` (columns a, b): label = the smallest node of
    its component. Also returns the number of rounds run (0 when the edges were stars)."""
    from pyspark.sql import functions as F

    # Pinned lazily: the star test that follows computes each round and keeps it (one job
    # a round, not two).
    current = _oriented(edges).transform(pinned, lazy=True)
    rounds = 0
    while not _is_star_forest(current):
        if rounds == MAX_ROUNDS:
            raise LinkageError(f"connected components did not converge in {MAX_ROUNDS} "
                               "rounds; this is a bug in linkage, please report it.")
        current = _small_star(_large_star(current)).transform(pinned, lazy=True)
        rounds += 1
    labels = current.select(F.col("c").alias("node"), F.col("p").alias("label")).unionByName(
        current.select(F.col("p").alias("node"), F.col("p").alias("label")).distinct())
    return labels, rounds


def component_roots(spark, edges, n: int, *, lazy: bool = False):
    """(row, root) for every row 0..n-1, checkpointed (`lazy`: by the next action, which must
    read it whole, `pinned`): `root` is the smallest row of its component of `edges` (a, b);
    a row in no edge is its own root."""
    from pyspark.sql import functions as F

    labels, _ = component_labels(edges)
    rows = spark.range(n).select(F.col("id").alias("row"))
    found = labels.select(F.col("node").alias("row"), F.col("label").alias("root"))
    return (rows.join(found, "row", "left")
            .select("row", F.coalesce("root", "row").alias("root"))
            .transform(pinned, lazy=lazy))


def cluster_ids(edges, n: int) -> tuple[np.ndarray, int]:
    """The cluster id of each of the rows 0..n-1: connected components of `edges` (a, b),
    numbered by their smallest row as the local engine numbers them. Also the rounds run."""
    labels, rounds = component_labels(edges)
    found = labels.toPandas()
    smallest = np.arange(n, dtype=np.int64)  # a row in no edge is its own cluster
    smallest[found["node"].to_numpy(dtype=np.int64)] = found["label"].to_numpy(np.int64)
    # A label is its cluster's smallest row; the clusters' ids are the labels' ranks.
    _, ids = np.unique(smallest, return_inverse=True)
    return ids.reshape(-1).astype(np.int64), rounds


def one_to_one(edges):
    """The edges (l, r, w) that greedy one-to-one matching accepts, as the local
    `linkage.clustering.one_to_one` accepts them: highest weight first, ties by (l, r).

    Each round accepts the edges that are the best of both their ends (window functions),
    then drops every edge touching an accepted node."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # Each round's frames pinned by the count that ends it (one job a round, where pinning
    # each and `isEmpty` took three or more).
    live = edges.select("l", "r", "w").transform(pinned, lazy=True)
    accepted = None
    while live.count():
        by_left = Window.partitionBy("l").orderBy(F.col("w").desc(), F.col("r").asc())
        by_right = Window.partitionBy("r").orderBy(F.col("w").desc(), F.col("l").asc())
        mutual = (live.withColumn("_bl", F.row_number().over(by_left))
                  .withColumn("_br", F.row_number().over(by_right))
                  .where((F.col("_bl") == 1) & (F.col("_br") == 1))
                  .select("l", "r", "w").transform(pinned, lazy=True))
        accepted = mutual if accepted is None else accepted.unionByName(mutual)
        live = (live.join(mutual.select("l"), "l", "left_anti")
                .join(mutual.select("r"), "r", "left_anti").transform(pinned, lazy=True))
    return accepted
