package gnuinput_test

import (
	"fmt"

	"github.com/ration-run/ration/internal/gnuinput"
	"github.com/ration-run/ration/runner/input"
)

func ExampleOpen() {
	// parallel echo ::: a b :::+ 1 2 ::: x y
	in, _ := gnuinput.Open([]gnuinput.Source{
		{Name: ":::", Values: input.Args([]string{"a", "b"})},
		{Name: ":::+", Values: input.Args([]string{"1", "2"}), Linked: true},
		{Name: ":::", Values: input.Args([]string{"x", "y"})},
	}, gnuinput.Options{})
	defer in.Close()
	for arg, err := range in.All() {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q\n", []string(arg))
	}
	// Output:
	// ["a" "1" "x"]
	// ["a" "1" "y"]
	// ["b" "2" "x"]
	// ["b" "2" "y"]
}

func ExampleBatches() {
	// parallel -n 2 over five inputs: the last job takes what is left.
	in, _ := gnuinput.Open([]gnuinput.Source{{Name: ":::", Values: input.Args([]string{"a", "b", "c", "d", "e"})}}, gnuinput.Options{})
	defer in.Close()
	for b, err := range gnuinput.Batches(in.All(), gnuinput.BatchOptions{MaxArgs: 2}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(b.Seq, b.First, b.Fields())
	}
	// Output:
	// 1 1 [a b]
	// 2 3 [c d]
	// 3 5 [e]
}
