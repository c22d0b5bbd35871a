"""GitHub Actions workflows: the model, `${{ }}` expressions, runner labels and what run blocks evaluate to."""
