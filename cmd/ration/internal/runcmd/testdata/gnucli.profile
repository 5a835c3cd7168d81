# a GNU parallel profile (run_gnu_cli_test.go)
--tag
-k
