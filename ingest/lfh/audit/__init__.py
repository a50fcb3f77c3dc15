"""Auditing the labeler against people: drawing a sample of stories for hand labels (sample.py). Reading the
filled workbook back is landing (lfh.landing.audit_sample_workbook)."""
