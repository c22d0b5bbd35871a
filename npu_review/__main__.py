import sys

from npu_review.cli import main

sys.exit(main())
