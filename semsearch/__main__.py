from semsearch.cli import main

main()
