"""`python -m linkage.synth`: write the samples, or `answer` a sample file's labels."""

from linkage.synth._files import main

raise SystemExit(main())
