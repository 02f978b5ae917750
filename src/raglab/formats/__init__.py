"""Moving data in and out of RAG lab's own formats.

``trec``: rankings and relevance judgements as TREC run and qrels files (and the safe file helpers
``atomic_write_text`` and ``read_text_lines`` the other modules share). ``beir``: a BEIR folder
(``corpus.jsonl``, ``queries.jsonl``, ``qrels/*.tsv``) to a folder of pages and a questions file.
``glasgow``: the classic Glasgow collections (Cranfield, CACM, CISI, ...) the same way.
``progress``: a progress bar on a terminal, silence everywhere else.
"""
