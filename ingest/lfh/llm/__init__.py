"""Talking to language models: model config, the client and its journal, batches, the prompts of METHOD.md section 3,
and the library behind `lfh generate`, `lfh label` and `lfh finetune-data`."""
