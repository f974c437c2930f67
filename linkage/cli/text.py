"""`linkage strip-boilerplate INPUT`: sentences or spans repeated across many documents, removed
from each of them (datatrove's sentence dedup)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("strip-boilerplate")
@click.argument("input_path", metavar="INPUT", type=click.Path(path_type=Path))
@click.option("--column", default="text", show_default=True, help="The text column to clean.")
@click.option("--min-documents", default=3, show_default=True, type=click.IntRange(min=2),
              help="A span in at least this many documents is boilerplate.")
@click.option("--span-sentences", default=1, show_default=True, type=click.IntRange(min=1),
              help="Consecutive sentences per span (1: sentence dedup).")
@click.option("--min-chars", default=0, show_default=True, type=click.IntRange(min=0),
              help="Keep spans shorter than this (normalized characters): short common "
                   "sentences such as 'Thank you.' are often content, not boilerplate.")
@click.option("--into", default=None,
              help="Write the cleaned text to this new column (default: replace --column).")
@click.option("--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for stripped.parquet (every input row, with `removed_spans` and "
                   "`removed_chars`) and summary.json.")
@click.option("--sep", default=None, help="CSV separator; sniffed when not given.")
@click.option("--encoding", default="utf-8", show_default=True, help="CSV text encoding.")
def command(input_path, column, min_documents, span_sentences, min_chars, into, out, sep, encoding):
    """Remove from every text of INPUT's --column each span of --span-sentences consecutive
    sentences that occurs in at least --min-documents documents (a banner, a signature, a
    copyright line); the rest of each text is kept as it was. Rows are never dropped.

    \b
    linkage strip-boilerplate sample_data/labelled_text.csv --column text --min-documents 3 \\
        --out out/stripped
    linkage strip-boilerplate sample_data/labelled_text.csv --column text --span-sentences 2 \\
        --into text_clean --out out/s
    """
    from linkage.cli import claim

    with claim(out, input_path):
        _strip(input_path, column, min_documents, span_sentences, min_chars, into, out, sep,
               encoding)


def _strip(input_path, column, min_documents, span_sentences, min_chars, into, out, sep,
           encoding) -> None:
    from linkage.errors import InputError
    from linkage.io import read, write_atomically, write_json, write_parquet
    from linkage.text.spans import strip_spans

    table = read(input_path, sep=sep, encoding=encoding)
    if column not in table.columns:
        raise InputError(f"{input_path}: no column `{column}` to strip (columns: "
                         f"{', '.join(map(str, table.columns))}). Pass the text column as "
                         "--column.")
    added = [c for c in (into, "removed_spans", "removed_chars") if c and c in table.columns]
    if added:
        raise InputError(f"{input_path}: already has a column `{added[0]}`, which this would "
                         "overwrite. Rename it, or pass another --into.")
    done = strip_spans(table[column], min_documents=min_documents, span_sentences=span_sentences,
                       min_chars=min_chars)
    table[into or column] = done.text.to_numpy()
    table["removed_spans"] = done.removed_spans
    table["removed_chars"] = done.removed_chars
    summary = {"input": str(input_path), "column": column, "into": into or column,
               **done.summary()}

    def fill(folder: Path) -> None:
        write_parquet(table, folder / "stripped.parquet")
        write_json(summary, folder / "summary.json")

    write_atomically(out, fill, what="strip-boilerplate", inputs=[input_path])
    click.echo(f"{summary['removed_spans']:,} boilerplate spans removed from "
               f"{summary['documents_changed']:,} of {summary['documents']:,} documents "
               f"({summary['removed_chars']:,} characters; {summary['documents_emptied']:,} "
               "left empty)")
    for span in done.boilerplate[:5]:
        text = span["text"] if len(span["text"]) <= 70 else span["text"][:67] + "..."
        click.echo(f"  {span['documents']:>6,} documents: {text}")
    click.echo(f"  wrote {out}/")
