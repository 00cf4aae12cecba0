"""Language: what every rule-using package shares — reading the per-language TOML rule
files (`datafiles`), regexes behind literal gates (`prefilter`), and the word-level
normalisation and stop words of the four languages (`words`)."""
