"""Complete corpora, ready to search: the demo corpus that ships with the app, and corpus files
exported on one machine and imported on another. It sits above ``corpus/`` and ``index/``
because each of these drives both: passages in, index built or installed, one step."""
