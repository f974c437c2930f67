"""`linkage review RUN_DIR`: label sampled pairs in a local page, saved as you go."""

from __future__ import annotations

import sys
from pathlib import Path

import click


def _bands(text: str | None) -> list[float] | None:
    if text is None:
        return None
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        values = []
    if not values:
        raise click.BadParameter(f"--bands takes numbers separated by commas, e.g. "
                                 f"0.6,0.7,0.8,0.9. Got {text!r}.")
    return values


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
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535),
              help="Port on 127.0.0.1; 0 picks a free one.")
@click.option("--open/--no-open", "open_browser", default=None,
              help="Open the page in a browser [default: when run from a terminal].")
def command(run_dir, labels_path, sample_path, bands, per_band, on, active, n_pairs, seed, port,
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

    server = serve(run_dir, labels=labels_path, sample=sample_path, bands=_bands(bands),
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
