"""What rules share across files of one revision, built once per run from the Context: workflow models, the image
inventory, the Ascend runner jobs and parsed documents."""
