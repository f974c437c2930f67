"""The labelling verbs: `sample` picks pairs for a person to label (per score band, or with
`--active` the pairs a label would teach the model most), `review` labels them in a local page,
saved as you go, and `calibrate` measures precision per band from the labels. The labels go
back into a run with `dedupe --labels`, or into `report --labels` and `drift`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from linkage.cli.common import LABELS_LOOP, parse_bands, seed_option


@click.command(epilog=LABELS_LOOP)
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--active", is_flag=True,
              help="Pick the pairs whose labels would change the model most (uncertain pairs, "
                   "spread over level patterns and score bands), leaving out the pairs the "
                   "run was made with (its labels.csv), instead of sampling per band.")
@click.option("--n", "n_pairs", default=25, show_default=True, type=click.IntRange(min=1),
              help="With --active: how many pairs to pick.")
@click.option("--bands", default="0.6,0.7,0.8,0.9", show_default=True,
              help="Band edges: match probabilities (or match weights with --on weight).")
@click.option("--per-band", default=100, show_default=True, type=int)
@click.option("--on", type=click.Choice(["probability", "weight"]), default="probability",
              show_default=True)
@seed_option
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="CSV to write: the pairs with both records side by side and a `label` column.")
def sample(run_dir, active, n_pairs, bands, per_band, on, seed, out_path):
    """Sample scored pairs per score band for a person to label (1 match, 0 non-match), or
    with --active the --n pairs a label would teach the model most (then rerun with --labels).
    """
    if active:
        from linkage.active import active_pairs

        table = active_pairs(run_dir, n_pairs, seed=seed)
        column = "picked"
    else:
        from linkage.measure.calibrate import sample_pairs

        table = sample_pairs(run_dir, parse_bands(bands), per_band, on=on, seed=seed)
        column = "band"
    table.to_csv(out_path, index=False)
    counts = table[column].str.split(":").str[0].value_counts(sort=False) if active else (
        table[column].value_counts(sort=False))
    click.echo(f"wrote {len(table):,} pairs to label to {out_path} ("
               + ", ".join(f"{band}: {n}" for band, n in counts.items()) + ")")



@click.command("review")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--labels", "labels_path", default=None,
              type=click.Path(dir_okay=False, path_type=Path),
              help="Labels CSV, written as you go and resumed when it exists "
                   "[default: RUN_DIR.labels.csv, beside the run folder].")
@click.option("--sample", "sample_path", default=None,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Review these pairs (a CSV from `linkage sample`) instead of sampling.")
@click.option("--bands", default=None,
              help="Band edges to sample from [default: 0.6,0.7,0.8,0.9 for probabilities; "
                   "the run's threshold -4,-2,0,+2,+4 for match weights].")
@click.option("--per-band", default=50, show_default=True, type=click.IntRange(min=1),
              help="Pairs to sample per band.")
@click.option("--on", type=click.Choice(["auto", "probability", "weight"]), default="auto",
              show_default=True,
              help="Band on match probability or match weight; auto: probability when the "
                   "run's scorer gives one (rule sums do not).")
@click.option("--active", is_flag=True,
              help="Review the pairs a label would teach the model most (as `linkage sample "
                   "--active` picks them), then rerun the run with --labels LABELS.")
@click.option("--n", "n_pairs", default=25, show_default=True, type=click.IntRange(min=1),
              help="With --active: how many pairs.")
@seed_option
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535),
              help="Port on 127.0.0.1; 0 picks a free one.")
@click.option("--open/--no-open", "open_browser", default=None,
              help="Open the page in a browser [default: when run from a terminal].")
def review(run_dir, labels_path, sample_path, bands, per_band, on, active, n_pairs, seed, port,
           open_browser):
    """Label sampled pairs of RUN_DIR in a local page: match (m), non-match (n) or unsure (u).

    Serves http://127.0.0.1:PORT/ (this machine only) until Ctrl-C. The page shows one pair at
    a time, the two records side by side with their differences marked and each comparison's
    level; every label is saved at once to the labels CSV, which `linkage calibrate` reads as
    it is (1 match, 0 non-match, unsure and blank are left out). Run it again on the same
    labels file to carry on where you stopped.

    \b
    linkage review out/customers --per-band 20
    linkage calibrate out/customers out/customers.labels.csv --on weight --bands 0,2,4,6,8

    With --active, the labels teach the model instead (each round in a new labels file:
    RUN_DIR.labels.csv, then RUN_DIR.labels-2.csv ...):

    \b
    linkage review out/customers --active --n 25
    linkage dedupe sample_data/customers.csv --labels out/customers.labels.csv --out out/customers
    """
    from linkage.review import serve

    server = serve(run_dir, labels=labels_path, sample=sample_path, bands=parse_bands(bands),
                   per_band=per_band, on=on, seed=seed, port=port,
                   active=n_pairs if active else None)
    review = server.review
    counts = review.store.counts()
    verb = "resuming" if review.resumed else "reviewing"
    if active:
        click.echo(f"{verb} {len(review.store):,} pairs of {review.run_dir} picked to teach its "
                   f"model ({counts['labelled']:,} labelled)")
    else:
        click.echo(f"{verb} {len(review.store):,} pairs of {review.run_dir} "
                   f"({counts['labelled']:,} labelled; bands on match {review.on}: "
                   + ", ".join(f"{b:g}" for b in review.bands) + ")")
    click.echo(f"labels are saved as you go to {review.labels_path}")
    if active:
        click.echo(f"when done, rerun the run with --labels {review.labels_path}")
    else:
        click.echo(f"when done: {review.calibrate_command()}")
    click.echo(f"open {server.url} in a browser; Ctrl-C to stop")
    if open_browser or (open_browser is None and sys.stdout.isatty()):
        import webbrowser

        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    counts = review.store.counts()
    click.echo(f"\nstopped: {counts['labelled']:,} of {len(review.store):,} pairs labelled in "
               f"{review.labels_path}")


@click.command()
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.argument("labels_path", metavar="LABELS", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--bands", default="0.6,0.7,0.8,0.9", show_default=True)
@click.option("--on", type=click.Choice(["probability", "weight"]), default="probability",
              show_default=True)
@click.option("--target", default=0.95, show_default=True, type=float,
              help="The precision the recommended threshold must reach in every band above it.")
@click.option("--write-rules", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the run's rules with the recommended threshold to this file.")
def calibrate(run_dir, labels_path, bands, on, target, write_rules):
    """Precision per band (95% Wilson interval) from labelled pairs, and the threshold that
    reaches --target precision."""
    import math

    import pandas as pd

    from linkage.measure.calibrate import calibrate as measure
    from linkage.settings import Rules

    labels = pd.read_csv(labels_path, dtype={"label": str}, keep_default_na=False)
    table, recommended = measure(labels, parse_bands(bands), on=on, target=target)
    for _, row in table.iterrows():
        precision = "   n/a" if row["labelled"] == 0 else f"{row['precision']:.3f}"
        click.echo(f"  [{row['band_from']:g}, {row['band_to']:g}): {int(row['labelled'])} "
                   f"labelled, precision {precision} "
                   f"(95% CI {row['ci_low']:.3f}-{row['ci_high']:.3f})")
    if recommended is None:
        click.echo(f"no band reaches precision {target:g}: keep the threshold, or label more")
        return
    threshold = recommended
    if on == "probability":  # the scorers' thresholds are match weights (log2 odds)
        p = min(max(recommended, 1e-9), 1 - 1e-9)
        threshold = math.log2(p / (1 - p))
    click.echo(f"recommended threshold: {recommended:g} ({on}) = match weight {threshold:.3f}")
    if write_rules is not None:
        rules = Rules.from_yaml(Path(run_dir) / "rules.yaml")
        data = rules.to_dict()
        data.setdefault("scoring", {})["threshold"] = round(threshold, 4)
        Rules.from_dict(data).to_yaml(write_rules)
        click.echo(f"  wrote {write_rules}")


COMMANDS = (sample, review, calibrate)
