package runcmd

import "github.com/ration-run/ration/internal/gnuinput"

// shuffled returns the arguments of args in an order shuffle chooses
// (rand.Shuffle): every argument is read first, as GNU parallel's --shuf
// generates every job first; memory grows with the number of arguments.
// A read error is yielded alone, before any argument.
func shuffled(args gnuinput.ArgSeq, shuffle func(n int, swap func(i, j int))) gnuinput.ArgSeq {
	return func(yield func(gnuinput.Arg, error) bool) {
		var all []gnuinput.Arg
		for a, err := range args {
			if err != nil {
				yield(nil, err)
				return
			}
			all = append(all, a)
		}
		shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
		for _, a := range all {
			if !yield(a, nil) {
				return
			}
		}
	}
}
