"""The stages before and beside blocking on Spark: url, exact (with the copies) and semantic.

url and exact: each record's 128-bit hash by the local code (`normalize_url`, `row_hashes`)
in `mapInPandas`; the records of one hash are a group whose first row (a window `min(row)`)
takes the others as copies, a star per stage as `stage_star` draws it. Groups joined by any
stage (url, exact, copies) are connected components on Spark (`component_roots`), and one
record per component, its smallest row, goes on to blocking, as `stage_groups` picks it.

semantic (SemDeDup): the records it selects, one per url/exact group, are embedded on the
executors (the bundled model loaded once per Python worker, vectors read from and added to
the vector cache by text hash: `linkage.text.embeddings.Encoder`); the vectors then go to
the driver, where k-means and the comparisons inside each k-means cluster run as locally
(`semdedup`), so the pairs and the centroid distances are the local engine's. That is the
one step of the text pipeline that gathers per-record data on the driver (a vector of 384
floats per selected record).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from linkage.engines.spark._frames import pinned, text
from linkage.engines.spark._graph import component_roots
from linkage.io import as_text
from linkage.run.stages import MATCHING_STAGES, stage_bit, stage_reasons
from linkage.settings import Rules

_ENCODERS: dict[str, object] = {}  # model -> Encoder, one per Python worker process

# Up to this many vectors SemDeDup runs on the driver exactly as locally; above, k-means is
# fitted on the driver on a seeded sample of this many and the rest runs on the executors.
DRIVER_VECTORS = 100_000


def stage_records(spark, combined: pd.DataFrame, rules: Rules, id_name: str):
    """The input values the url, exact and semantic stages read, as text by row; the Spark
    name of each column; the exact stage's columns (named, else all but the id, in the
    table's order). (Read from the driver's table, as the records are today.)"""
    columns, exact = [], []
    if rules.url is not None:
        columns.append(rules.url.column)
    if rules.exact is not None:
        exact = rules.exact.columns or [c for c in combined.columns if c != id_name]
        columns += exact
    if rules.semantic is not None:
        columns += [rules.semantic.column, *(rules.semantic.where or {})]
    columns = list(dict.fromkeys(columns))
    names = {c: f"s{k}" for k, c in enumerate(columns)}
    frame = pd.DataFrame({"row": np.arange(len(combined), dtype=np.int64)})
    for c in columns:
        frame[names[c]] = pd.Series(as_text(combined[c]), dtype=object)
    schema = ", ".join(["row long", *(f"{names[c]} string" for c in columns)])
    return spark.createDataFrame(frame, schema=schema), names, exact


def _hash_batches(stage: str, columns: list[str], normalize: bool):
    """mapInPandas: (row, hi, lo) of each record with a value in `columns`, the hash
    `stage_star` groups by (the url stage hashes the canonical URL)."""
    from linkage.normalize import normalize_url
    from linkage.text.exact import row_hashes

    def run(batches):
        for batch in batches:
            frame = pd.DataFrame({c: pd.Series(text(batch[c]), dtype=object) for c in columns})
            if stage == "url":
                frame = pd.DataFrame({"url": normalize_url(frame[columns[0]])})
            present = np.zeros(len(frame), dtype=bool)
            for column in frame.columns:
                values = frame[column]
                present |= (values.notna() & values.astype(str).str.strip().ne("")).to_numpy()
            hashes = row_hashes(frame, list(frame.columns), normalize=normalize)
            words = hashes.view(np.int64)
            yield pd.DataFrame({"row": batch["row"].to_numpy(dtype=np.int64)[present],
                                "hi": words[present, 0], "lo": words[present, 1]})

    return run


def _star(records, stage: str, columns: list[str], normalize: bool):
    """(first member l, copy r) of the records with equal hashes."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    hashed = records.mapInPandas(_hash_batches(stage, columns, normalize),
                                 "row long, hi long, lo long")
    first = F.min("row").over(Window.partitionBy("hi", "lo"))
    return (hashed.withColumn("l", first).where(F.col("l") != F.col("row"))
            .select("l", F.col("row").alias("r")).cache())


def stage_stars(spark, work, records, names: dict[str, str], exact: list[str], rules: Rules,
                copies_star, n: int):
    """The url and exact stages' stars (l, r) by stage name, then the copies' (`copies_star`,
    None without identity columns), in the local order; their summary counts; and the
    records left to block: the smallest row of each component the stars join."""
    from pyspark.sql import functions as F

    stars = {}
    if rules.url is not None:
        stars["url"] = _star(records, "url", [names[rules.url.column]], False)
    if rules.exact is not None:
        stars["exact"] = _star(records, "exact", [names[c] for c in exact],
                               rules.exact.normalize)
    if copies_star is not None:
        stars["copies"] = copies_star
    stats = {}
    for name, star in stars.items():
        row = star.agg(F.countDistinct("l").alias("g"), F.count(F.lit(1)).alias("c")).collect()[0]
        stats[name] = {"groups_with_copies": int(row["g"]), "records_collapsed": int(row["c"])}
    if not stars:
        return stars, stats, work
    if set(stars) == {"copies"}:  # a star alone: its copies are exactly the rows to leave out
        return stars, stats, work.join(stars["copies"].select(F.col("r").alias("row")), "row",
                                       "left_anti")
    edges = None
    for star in stars.values():
        part = star.select(F.col("l").alias("a"), F.col("r").alias("b"))
        edges = part if edges is None else edges.unionByName(part)
    roots = component_roots(spark, edges, n)
    first = roots.where(F.col("row") == F.col("root")).select("row")
    return stars, stats, work.join(first, "row")


def stage_proposed(stars: dict, stats: dict) -> dict[str, int]:
    """`proposed` counts of the star stages, as the local engine adds them after blocking."""
    return {name: stats[name]["records_collapsed"] for name in stars if name in stats}


def staged(rules: Rules):
    """A Spark condition: the pair was proposed by a stage that matches by itself (exact, url,
    semantic), so it is matched whatever its weight (`stage_matches`); None without one."""
    from pyspark.sql import functions as F

    bits = 0
    for name, _ in stage_reasons(rules):
        bits |= stage_bit(rules, name)
    if not bits:
        return None
    return F.col("mask").bitwiseAND(F.lit(bits).cast("long")) != 0


def stage_of(rules: Rules):
    """A Spark column: per pair, the index in `stage_reasons(rules)` of the stage that
    matched it, -1 where none proposed it (`pair_stage`, the plainest evidence first)."""
    from pyspark.sql import functions as F

    out = None
    for k, (name, _) in enumerate(stage_reasons(rules)):
        hit = F.col("mask").bitwiseAND(F.lit(stage_bit(rules, name)).cast("long")) != 0
        out = F.when(hit, F.lit(k)) if out is None else out.when(hit, F.lit(k))
    return (F.lit(-1) if out is None else out.otherwise(F.lit(-1))).cast("int")


def matched_pairs(rules: Rules, threshold: float):
    """A Spark condition: the pair is matched before guards (`stage_matches`): at or above
    the threshold, or proposed by a stage that matches by itself."""
    from pyspark.sql import functions as F

    above = F.col("match_weight") >= F.lit(float(threshold))
    by_stage = staged(rules)
    return above if by_stage is None else above | by_stage


# -- semantic ------------------------------------------------------------------------------


def _encoder(model: str):
    from linkage.text.embeddings import Encoder

    if model not in _ENCODERS:
        _ENCODERS[model] = Encoder(model=model, progress=False)
    return _ENCODERS[model]


def _select_batches(spec, names: dict[str, str]):
    """mapInPandas: the rows the stage selects (a text, and the `where` values allowed)."""
    allowed = {names[c]: [str(v) for v in values] for c, values in (spec.where or {}).items()}
    column = names[spec.column]

    def run(batches):
        for batch in batches:
            values = pd.Series(text(batch[column]), dtype=object)
            selected = values.notna().to_numpy() & \
                values.astype(str).str.strip().ne("").to_numpy()
            for c, ok in allowed.items():
                selected &= pd.Series(text(batch[c]), dtype=object).astype(str).isin(ok) \
                    .to_numpy()
            yield pd.DataFrame({"row": batch["row"].to_numpy(dtype=np.int64)[selected],
                                "t": values.to_numpy(dtype=object)[selected]})

    return run


def _embed_batches(model: str):
    """mapInPandas: each text's vector (unit length, the Encoder's) and whether it is long
    (embedded window by window)."""

    def run(batches):
        for batch in batches:
            texts = [str(t) for t in text(batch["t"])]
            encoder = _encoder(model)
            vectors = encoder.encode(texts) if texts else np.zeros((0, 1), np.float32)
            yield pd.DataFrame({"row": batch["row"].to_numpy(dtype=np.int64),
                                "v": list(vectors),
                                "long": encoder.long_text_flags(texts)})

    return run


def _embedded(spark, records, names: dict[str, str], rules: Rules, stars: dict, n: int):
    """The records the semantic stage selects (row, t, root, s: the first selected record of
    its url/exact group, which stands in for the others), those embedded (row, v, long) and
    the stage's counts; both frames cached."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    spec = rules.semantic
    selected = records.mapInPandas(_select_batches(spec, names), "row long, t string")
    joined = [star for name, star in stars.items() if name in MATCHING_STAGES]
    if joined:
        edges = None
        for star in joined:
            part = star.select(F.col("l").alias("a"), F.col("r").alias("b"))
            edges = part if edges is None else edges.unionByName(part)
        selected = selected.join(component_roots(spark, edges, n), "row")
        # the first selected record of each group stands in for the others
        stand_in = F.min("row").over(Window.partitionBy("root"))
        selected = selected.withColumn("s", stand_in).cache()
        chosen = selected.where(F.col("s") == F.col("row")).select("row", "t")
    else:
        selected = selected.withColumn("root", F.col("row")).withColumn("s", F.col("row"))
        selected = selected.cache()
        chosen = selected.select("row", "t")
    embedded = chosen.mapInPandas(_embed_batches(spec.model),
                                  "row long, v array<float>, long boolean").cache()
    counts = selected.agg(F.count(F.lit(1)).alias("selected"),
                          F.countDistinct("s").alias("embedded")).collect()[0]
    long_texts = (embedded.where("long").join(chosen, "row").select("t").distinct().count())
    stats = {"records_embedded": int(counts["embedded"]),
             "copies_not_embedded": int(counts["selected"]) - int(counts["embedded"]),
             "long_texts": int(long_texts)}
    return selected, embedded, bool(joined), stats


def _finish_stats(stats: dict, spec, frame) -> dict:
    from linkage.text.embeddings import Encoder

    stats.update(window_word_pieces=Encoder(model=spec.model).window,
                 duplicate_pairs=frame.count())
    return stats


def semantic_pairs(spark, records, names: dict[str, str], rules: Rules, stars: dict, n: int):
    """SemDeDup on Spark: the duplicate pairs (l, r) as a Spark frame, each record's centroid
    distance (NaN where not selected) and the stage's summary counts, as `semantic_stage`."""
    from pyspark.sql import functions as F

    from linkage.text.semdedup import semdedup

    spec = rules.semantic
    selected, embedded, joined, stats = _embedded(spark, records, names, rules, stars, n)
    distance = np.full(n, np.nan)
    pairs = np.zeros((0, 2), dtype=np.int64)
    frame = None  # the pairs as a Spark frame, where they were found there
    if stats["records_embedded"] > DRIVER_VECTORS:
        frame, found = _semdedup_on_spark(embedded, spec, stats["records_embedded"])
        found = found.toPandas()
        distance[found["row"].to_numpy(np.int64)] = found["d"].to_numpy(np.float32)
        if joined:  # copies take their stand-in's distance
            copies = selected.where(F.col("s") != F.col("row")).select("row", "s").toPandas()
            distance[copies["row"].to_numpy(np.int64)] = distance[copies["s"].to_numpy(np.int64)]
    elif stats["records_embedded"] >= 2:
        gathered = embedded.select("row", "v").toPandas().sort_values("row", kind="stable")
        rows = gathered["row"].to_numpy(dtype=np.int64)
        vectors = np.stack(gathered["v"].to_numpy()).astype(np.float32)
        clusters = spec.n_clusters or max(1, round(float(np.sqrt(len(rows)))))
        result = semdedup(vectors, n_clusters=min(clusters, len(rows)), epsilon=spec.epsilon,
                          seed=spec.seed)
        found = np.asarray(result.pairs, dtype=np.int64).reshape(-1, 2)
        pairs = np.stack([rows[found[:, 0]], rows[found[:, 1]]], axis=1)
        distance[rows] = result.centroid_distance
        if joined:  # copies take their stand-in's distance
            copies = selected.where(F.col("s") != F.col("row")).select("row", "s").toPandas()
            distance[copies["row"].to_numpy(np.int64)] = distance[copies["s"].to_numpy(np.int64)]
    embedded.unpersist()
    selected.unpersist()
    if frame is None:
        frame = spark.createDataFrame(pd.DataFrame({"l": pairs[:, 0], "r": pairs[:, 1]}),
                                      "l long, r long")
    return frame, distance, _finish_stats(stats, spec, frame)


def semantic_distributed(spark, records, names: dict[str, str], rules: Rules, stars: dict,
                         n: int):
    """SemDeDup on the distributed route: always `_semdedup_on_spark` (k-means fitted on at
    most `DRIVER_VECTORS` sampled vectors, the rest on the executors), so no vector beyond
    that sample reaches the driver. Returns the pairs (l, r), the centroid distances
    (row, d: the selected records, a copy with its stand-in's) as Spark frames, checkpointed,
    and the stage's counts."""
    from pyspark.sql import functions as F

    spec = rules.semantic
    selected, embedded, joined, stats = _embedded(spark, records, names, rules, stars, n)
    if stats["records_embedded"] >= 2:
        frame, found = _semdedup_on_spark(embedded, spec, stats["records_embedded"])
    else:  # nothing to compare, and no distance (as `semantic_pairs` leaves it)
        frame = spark.createDataFrame(pd.DataFrame({"l": [], "r": []}, dtype=np.int64),
                                      "l long, r long")
        found = spark.createDataFrame(pd.DataFrame({"row": np.zeros(0, np.int64),
                                                    "d": np.zeros(0, np.float32)}),
                                      "row long, d float")
    distance = found
    if joined:  # copies take their stand-in's distance
        of_copy = selected.where(F.col("s") != F.col("row")).select("row", "s")
        distance = distance.unionByName(of_copy.join(
            found.select(F.col("row").alias("s"), "d"), "s").select("row", "d"))
    distance = distance.transform(pinned)
    frame = frame.transform(pinned)
    embedded.unpersist()
    selected.unpersist()
    return frame, distance, _finish_stats(stats, spec, frame)


def _semdedup_on_spark(embedded, spec, count: int):
    """SemDeDup over more vectors than the driver reads: k-means fitted on a seeded sample of
    `DRIVER_VECTORS` (`kmeans`, as locally), each vector assigned to its nearest unit centroid
    (largest cosine) and given its distance on the executors, then every k-means cluster
    compared all against all in one group (`cluster_pairs`, as locally). Returns the pairs
    (rows, sorted) and each embedded record's centroid distance (row, d), both Spark frames,
    checkpointed."""
    from pyspark.sql import functions as F

    from linkage.text.semdedup import cluster_pairs, kmeans, unit_vectors

    sample = (embedded.select("row", "v").sample(fraction=min(1.0, 1.2 * DRIVER_VECTORS / count),
                                                 seed=spec.seed)
              .orderBy("row").limit(DRIVER_VECTORS).toPandas())
    x = unit_vectors(np.stack(sample["v"].to_numpy()).astype(np.float32))
    clusters = spec.n_clusters or max(1, round(float(np.sqrt(count))))
    _, centroids = kmeans(x, min(clusters, len(x)), seed=spec.seed)
    cut = np.float32(1.0 - spec.epsilon)

    def assign(batches):
        for batch in batches:
            xb = unit_vectors(np.stack(batch["v"].to_numpy())) if len(batch) \
                else np.zeros((0, centroids.shape[1]), np.float32)
            cosine = xb @ centroids.T
            label = cosine.argmax(axis=1) if len(xb) else np.zeros(0, np.int64)
            yield pd.DataFrame({
                "row": batch["row"].to_numpy(dtype=np.int64), "c": label.astype(np.int64),
                "d": (1.0 - cosine[np.arange(len(xb)), label]).astype(np.float32),
                "v": list(xb)})

    def compare(frame: pd.DataFrame) -> pd.DataFrame:
        frame = frame.sort_values("row", kind="stable")
        members = frame["row"].to_numpy(dtype=np.int64)
        xc = np.stack(frame["v"].to_numpy()).astype(np.float32)
        a, b, _ = cluster_pairs(xc, members, cut)
        return pd.DataFrame({"l": a, "r": b})

    assigned = embedded.select("row", "v").mapInPandas(
        assign, "row long, c long, d float, v array<float>").cache()
    found = assigned.groupBy("c").applyInPandas(compare, "l long, r long").transform(pinned)
    distances = assigned.select("row", F.col("d")).transform(pinned)
    assigned.unpersist()
    return found, distances
