nice -n 1
