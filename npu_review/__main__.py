from npu_review.cli import program

program()
