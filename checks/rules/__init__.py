"""One module per rule; every module here is imported by checks.rule.all_rules()."""
