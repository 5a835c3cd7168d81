package input_test

import (
	"fmt"
	"strings"

	"github.com/ration-run/ration/runner/input"
)

func ExampleReader() {
	for rec, err := range input.Reader(strings.NewReader("a b\x00it's\nnew\x00"), 0) {
		if err != nil {
			panic(err)
		}
		fmt.Printf("%q\n", rec)
	}
	// Output:
	// "a b"
	// "it's\nnew"
}

func ExampleOpen() {
	// parallel echo ::: a b :::+ 1 2 ::: x y
	in, _ := input.Open([]input.Source{
		{Name: ":::", Values: input.Args([]string{"a", "b"})},
		{Name: ":::+", Values: input.Args([]string{"1", "2"}), Linked: true},
		{Name: ":::", Values: input.Args([]string{"x", "y"})},
	}, input.Options{})
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
	in, _ := input.Open([]input.Source{{Name: ":::", Values: input.Args([]string{"a", "b", "c", "d", "e"})}}, input.Options{})
	defer in.Close()
	for b, err := range input.Batches(in.All(), input.BatchOptions{MaxArgs: 2}) {
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
