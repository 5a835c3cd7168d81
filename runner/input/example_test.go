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
