"""The verbs for text corpora, beside the record runs: `decontaminate` (training records that
share a passage with an evaluation set), `lsh-params` (the MinHash LSH bands and rows for a
Jaccard threshold, with their S-curve) and `strip-boilerplate` (sentences or spans repeated
across many documents, removed from each of them: datatrove's sentence dedup)."""

from __future__ import annotations

from pathlib import Path

import click

from linkage.cli.common import claim, encoding_option, out_folder_option, sep_option


@click.command()
@click.argument("train_path", metavar="TRAIN", type=click.Path(path_type=Path))
@click.option("--eval", "eval_path", required=True, type=click.Path(path_type=Path),
              help="The evaluation set whose items must not leak into TRAIN.")
@click.option("--text-column", default="text", show_default=True)
@click.option("--ngram", default=13, show_default=True, type=int,
              help="Words in a shared passage that counts as contamination.")
@click.option("--char-ngram", default=None, type=int,
              help="Characters per n-gram for Hangul/CJK text (default 3 x --ngram).")
@click.option("--train-id", default=None, help="Id column of TRAIN (row numbers otherwise).")
@click.option("--eval-id", default=None, help="Id column of --eval (row numbers otherwise).")
@out_folder_option()
@sep_option()
@encoding_option(None)
def decontaminate(train_path, eval_path, text_column, ngram, char_ngram, train_id, eval_id,
                  out, sep, encoding):
    """Flag TRAIN records that share a --ngram-word passage (or their whole normalized text)
    with an item of --eval, naming the eval item; writes contamination.parquet."""
    from linkage.io import read
    from linkage.text.contamination import contamination_summary, write_contamination_report
    from linkage.text.contamination import decontaminate as find_contamination

    with claim(out, train_path, eval_path):
        train = read(train_path, sep=sep, encoding=encoding)
        evaluation = read(eval_path, sep=sep, encoding=encoding)
        result = find_contamination(train, evaluation, text_column=text_column, ngram=ngram,
                     char_ngram=char_ngram, train_id=train_id, eval_id=eval_id)
        write_contamination_report(result, out)
    s = contamination_summary(result)
    click.echo(f"{s['contaminated']:,} of {s['train_records']:,} train records contaminated "
               f"({s['contamination_rate']:.2%}; {s['exact_matches']:,} exact copies)")
    click.echo(f"  wrote {out}/")




@click.command("lsh-params")
@click.option("--threshold", required=True, type=float, help="Jaccard similarity to catch.")
@click.option("--num-perm", default=128, show_default=True, type=int)
@click.option("--bands", default=None, type=int, help="Override the derived bands...")
@click.option("--rows", default=None, type=int, help="...and rows per band.")
def lsh_params(threshold, num_perm, bands, rows):
    """Print the LSH bands and rows for a Jaccard threshold, the threshold they really give,
    (1/b)^(1/r), and the S-curve P(candidate | J) = 1 - (1 - J^r)^b for J from 0.5 to 0.95."""
    from linkage.errors import RulesError
    from linkage.text.lsh import format_lsh_params

    if not 0 < threshold < 1:
        raise RulesError(f"--threshold must be in (0, 1). Got {threshold!r} instead.")
    click.echo(format_lsh_params(threshold, num_perm, bands, rows))




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
@out_folder_option("Folder for stripped.parquet (every input row, with `removed_spans` and "
                   "`removed_chars`) and summary.json.")
@sep_option()
@encoding_option()
def strip_boilerplate(input_path, column, min_documents, span_sentences, min_chars, into, out, sep,
                      encoding):
    """Remove from every text of INPUT's --column each span of --span-sentences consecutive
    sentences that occurs in at least --min-documents documents (a banner, a signature, a
    copyright line); the rest of each text is kept as it was. Rows are never dropped.

    \b
    linkage strip-boilerplate sample_data/labelled_text.csv --column text --min-documents 3 \\
        --out out/stripped
    linkage strip-boilerplate sample_data/labelled_text.csv --column text --span-sentences 2 \\
        --into text_clean --out out/s
    """
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


COMMANDS = (decontaminate, lsh_params, strip_boilerplate)
