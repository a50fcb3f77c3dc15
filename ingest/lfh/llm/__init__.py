"""Talking to language models: model config, the client and its journal, batches, the prompts of docs/METHOD.md §3,
and the library behind `lfh generate`, `lfh label` and `lfh finetune-data`."""
