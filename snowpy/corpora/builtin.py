"""The corpora snowpy knows by name, registered through the public hook.

File names and SHA-256 are those of the archives in the corpora folder given by
``SNOWPY_DATA`` (the packaging documented in its README); where the original distribution
has the same layout, its URL is a second accepted file, downloaded when
nothing is found. Seeded splits (for corpora published without one) use
:func:`seeded_split`: a permutation by ``numpy.random.default_rng(0)`` of the
documents in file order, the first ``test_fraction`` of it being ``test``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np

from snowpy.corpora.delimited import read_csv, read_tsv
from snowpy.corpora.directory import read_directory
from snowpy.corpora.documents import CorpusError, Document, Problems
from snowpy.corpora.jsonl import read_jsonl
from snowpy.corpora.registry import CorpusFile, CorpusSpec
from snowpy.corpora.sources import Files, decode, iter_lines
from snowpy.hookspecs import hookimpl
from snowpy.params import Param

__all__ = ["CORPORA", "seeded_split"]


def seeded_split(documents: Iterable[Document], split: str, test_fraction: float = 0.2,
                 seed: int = 0) -> Iterator[Document]:
    """``train``/``test`` of a corpus without a split (``all`` keeps everything).

    >>> docs = [Document(str(i), "x", str(i)) for i in range(10)]
    >>> [d.text for d in seeded_split(docs, "test")]
    ['4', '6']
    """
    documents = list(documents)
    if split == "all":
        yield from documents
        return
    order = np.random.default_rng(seed).permutation(len(documents))
    test = set(order[: int(round(test_fraction * len(documents)))].tolist())
    for index, document in enumerate(documents):
        if (index in test) == (split == "test"):
            yield document


def _find(path: Path, suffix: str) -> tuple[str, bytes]:
    files = Files(path)
    matches = [n for n in files.names if n == suffix or n.endswith("/" + suffix)]
    if not matches:
        raise CorpusError(f"{path}: no file {suffix!r} in it")
    return files.read(matches[0])


# ----------------------------------------------------------------- readers
def _newsgroups(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    return read_directory(path, split=split, encoding="latin-1", problems=problems)


def _reuters(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    where, content = _find(path, "derived_modapte/categories_90.txt")
    categories = {line.split("\t")[0] for line in content.decode("utf-8").splitlines() if line}
    member, _ = _find(path, f"derived_modapte/{split}.jsonl")
    for document in read_jsonl(member, label_field="topics", text_fields=("title", "body"),
                               problems=problems):
        labels = tuple(label for label in document.label if label in categories)
        yield Document(document.text, labels, document.source)


def _sms(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    where, _ = _find(path, "SMSSpamCollection")
    return seeded_split(read_tsv(where, problems=problems), split)


def _movie_reviews(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    for document in read_directory(path, labels=("pos", "neg"), problems=problems):
        fold = int(Path(document.source).name[2:5])  # cv000_29416.txt -> 0
        if split == "all" or (split == "test") == (fold >= 900):
            yield document


def _sentence_polarity(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    def lines() -> Iterator[Document]:
        for label in ("pos", "neg"):
            where, content = _find(path, f"sentence_polarity/rt-polarity.{label}")
            for at, text in iter_lines(content, where, "utf-8"):
                if text and text.strip():
                    yield Document(text, label, at)
    return seeded_split(lines(), split, test_fraction=0.1)


def _trec(path: Path, split: str, problems: Problems, labels: str) -> Iterator[Document]:
    where, content = _find(path, f"qc/{split}.txt")
    for at, line in iter_lines(content, where, "latin-1"):
        if line is None or not line.strip():  # (None: undecodable, only with errors="skip")
            continue
        tag, _, question = line.partition(" ")
        coarse, colon, fine = tag.partition(":")
        if not colon or not coarse or not fine or not question:
            problems.report(at, "expected 'COARSE:fine question'")
            continue
        yield Document(question, coarse if labels == "coarse" else tag, at)


def _imdb(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    return read_directory(path, split=split, labels=("pos", "neg"), problems=problems)


def _enron(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    for document in read_directory(path, labels=("ham", "spam"), encoding="latin-1",
                                   problems=problems):
        folder = document.source.split("::")[-1].split("/")[-3]  # enron6
        if split == "all" or (split == "test") == (folder == "enron6"):
            yield document


def _ag_news(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    where, content = _find(path, "classes.txt")
    names = [line.strip() for line in (decode(content, "utf-8", "strict", where) or "")
             .splitlines() if line.strip()]
    where, _ = _find(path, f"{split}.csv")
    for document in read_csv(where, label_column=0, text_columns=(1, 2), header=False,
                             problems=problems):
        try:
            label = names[int(document.label) - 1]
        except (ValueError, IndexError):
            problems.report(document.source, f"class {document.label!r} is not 1..{len(names)}")
            continue
        yield Document(document.text, label, document.source)


def _bbc(path: Path, split: str, problems: Problems) -> Iterator[Document]:
    return seeded_split(read_directory(path, encoding="latin-1", problems=problems), split)


# ------------------------------------------------------------------ records
_RESEARCH = "research use; see the archive's PROVENANCE.txt"

CORPORA = (
    CorpusSpec(
        name="20newsgroups",
        summary="20 Newsgroups, bydate: 11,314 / 7,532 posts in 20 groups (topic, single-label)",
        files=(CorpusFile("20newsgroups.tar.gz",
                          "54bb745adec71d66ae509edf890187abf1b47326db2d8c65db7b1725e921fb06"),
               CorpusFile("20news-bydate.tar.gz", None,
                          "http://qwone.com/~jason/20Newsgroups/20news-bydate.tar.gz")),
        read=_newsgroups, splits=("train", "test"), counts={"train": 11314, "test": 7532},
        source="http://qwone.com/~jason/20Newsgroups/ (Ken Lang)",
        license="no license stated; widely redistributed",
        citation="K. Lang, NewsWeeder: Learning to filter netnews, ICML 1995",
        split_note="the bydate split: posts before / after a date",
    ),
    CorpusSpec(
        name="reuters21578-modapte",
        summary="Reuters-21578 ModApte: 9,603 / 3,299 newswires, 90 categories (multi-label)",
        files=(CorpusFile("reuters21578.tar.gz",
                          "df3e8f1e64193f2fec883adebf97c8cee98a4bf7b3b5cd40d027533de53d29f1"),),
        read=_reuters, splits=("train", "test"), counts={"train": 9603, "test": 3299},
        source="http://kdd.ics.uci.edu/databases/reuters21578/ (David D. Lewis); ModApte JSON "
               "Lines derived as documented in the archive's PROVENANCE.txt",
        license="Reuters Ltd. and Carnegie Group: free distribution for research purposes only",
        citation="Reuters-21578, Distribution 1.0; Apte, Damerau and Weiss 1994 (ModApte)",
        split_note="ModApte (LEWISSPLIT with TOPICS=YES); labels restricted to the 90 "
                   "categories with a training and a test document; some documents have none",
        multilabel=True,
    ),
    CorpusSpec(
        name="sms-spam",
        summary="SMS Spam Collection v.1: 5,574 messages, 747 spam (binary)",
        files=(CorpusFile("sms_spam_collection.tar.gz",
                          "fbbcb84898debc6dc71349a76d414cd0803b420da9de60979bb21e9cbbbd2ad4"),
               CorpusFile("sms+spam+collection.zip", None,
                          "https://archive.ics.uci.edu/static/public/228/sms+spam+collection.zip")),
        read=_sms, splits=("train", "test", "all"),
        counts={"train": 4459, "test": 1115, "all": 5574},
        source="https://archive.ics.uci.edu/dataset/228/sms+spam+collection",
        license="free with citation (CC BY 4.0 at UCI)",
        citation="Almeida, Gomez Hidalgo and Yamakami, DocEng 2011",
        split_note="seeded: 20% test (seeded_split, seed 0)",
    ),
    CorpusSpec(
        name="movie-reviews",
        summary="Pang and Lee movie review polarity v2.0: 1,000 positive, 1,000 negative",
        files=(CorpusFile("movie_review_polarity_v2.tar.gz",
                          "95a112a45d9dab6651cc9ac6c21109bdb6fbd285900af0e58cf327129293d01f"),
               CorpusFile("review_polarity.tar.gz", None,
                          "https://www.cs.cornell.edu/people/pabo/movie-review-data/"
                          "review_polarity.tar.gz")),
        read=_movie_reviews, splits=("train", "test", "all"),
        counts={"train": 1800, "test": 200, "all": 2000},
        source="https://www.cs.cornell.edu/people/pabo/movie-review-data/",
        license="CC BY 4.0 (NLTK)", citation="Pang and Lee, ACL 2004",
        split_note="the authors' cross-validation folds: cv900-cv999 are test",
    ),
    CorpusSpec(
        name="sentence-polarity",
        summary="Pang and Lee sentence polarity v1.0: 5,331 positive, 5,331 negative snippets",
        files=(CorpusFile("sentence_polarity_v1.tar.gz",
                          "3b9479a6329e8ddecff92a7a9c7c712650c1d109d48757979533eabb619460d8"),),
        read=_sentence_polarity, splits=("train", "test", "all"),
        counts={"train": 9596, "test": 1066, "all": 10662},
        source="https://www.cs.cornell.edu/people/pabo/movie-review-data/",
        license="CC BY 4.0 (NLTK)", citation="Pang and Lee, ACL 2005",
        split_note="seeded: 10% test (seeded_split, seed 0)",
    ),
    CorpusSpec(
        name="trec",
        summary="TREC question classification: 5,452 / 500 questions, 6 coarse or 50 fine types",
        files=(CorpusFile("trec_qc.tar.gz",
                          "f849b58ff05d4336c30493e68ec27ff1494f9f07d8e79bba3f6dfc3190ce6dd0"),),
        read=_trec, splits=("train", "test"), counts={"train": 5452, "test": 500},
        source="http://cogcomp.org/Data/QA/QC/", license="research data, no license stated",
        citation="Li and Roth, Learning Question Classifiers, COLING 2002",
        split_note="the published train (5,500 set) and TREC 10 test questions",
        options=(Param("labels", "coarse", "coarse (6) or fine (50) question types", type=str,
                       choices=("coarse", "fine")),),
    ),
    CorpusSpec(
        name="imdb",
        summary="IMDB Large Movie Review v1.0: 25,000 / 25,000 reviews, positive or negative",
        files=(CorpusFile("imdb_large_movie_review.tar.gz",
                          "487b3b9fba47487d07264981d0fc5dcc5d3b99321a047f43503c7a6d9340f96e"),
               CorpusFile("aclImdb_v1.tar.gz", None,
                          "https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz")),
        read=_imdb, splits=("train", "test"), counts={"train": 25000, "test": 25000},
        source="https://ai.stanford.edu/~amaas/data/sentiment/", license="no license stated",
        citation="Maas et al., ACL 2011", split_note="the published train and test halves",
    ),
    CorpusSpec(
        name="enron-spam",
        summary="Enron-Spam (preprocessed): enron1-6 ham and spam mail (binary)",
        files=(CorpusFile("enron_spam.tar.gz",
                          "3b9ea6c374fa98d1a73dd94a2478d24408d5959fdfe711e0efb98ab5ad6abfa5"),),
        read=_enron, splits=("train", "test", "all"),
        counts={"train": 27715, "test": 6000, "all": 33715},
        source="http://www2.aueb.gr/users/ion/data/enron-spam/",
        license="no license stated; public record", citation="Metsis et al., CEAS 2006",
        split_note="by mailbox: enron1-enron5 train, enron6 test (a new user's mail)",
    ),
    CorpusSpec(
        name="ag-news",
        summary="AG News topics: 4 classes; test split of 7,600 here (train.csv when present)",
        files=(CorpusFile("ag_news_test_only.tar.gz",
                          "486e3254deee3271d407dab1fcf7d0ea907c931bb6db4f2be935b03308b5f5b6"),),
        read=_ag_news, splits=("test", "train"), counts={"test": 7600, "train": 120000},
        source="Zhang, Zhao and LeCun's ag_news_csv", license=_RESEARCH,
        citation="Zhang, Zhao and LeCun, NIPS 2015",
        split_note="the published splits; the shared archive has only test.csv",
    ),
    CorpusSpec(
        name="bbc-news",
        summary="BBC News: 2,225 articles in 5 topics",
        files=(CorpusFile("bbc_news.tar.gz",
                          "0fe8ac63fb26829b723ca3b3fba2fefc88a11caac63e1d945453855b35b6d119"),),
        read=_bbc, splits=("train", "test", "all"),
        counts={"train": 1780, "test": 445, "all": 2225},
        source="http://mlg.ucd.ie/datasets/bbc.html", license=_RESEARCH,
        citation="Greene and Cunningham, ICML 2006", split_note="seeded: 20% test",
    ),
)


@hookimpl
def snowpy_corpora() -> tuple[CorpusSpec, ...]:
    """The corpora snowpy reads by name."""
    return CORPORA
