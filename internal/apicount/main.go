// Command apicount counts the public API of the module in the current
// directory, so that the size of the API is a number anyone can
// reproduce: the public packages (every package outside internal/, cmd/,
// examples and testdata, nested modules left out) and, in each, the
// exported functions, the exported types and the exported methods of
// exported types (an identifier declared once per OS counts once).
//
//	go run ./internal/apicount [-max-packages N] [-max-exported N]
//
// It prints one line per package and a total; with a maximum, it exits 1
// when the API is larger.
//
// It imports the standard library only: it reads the module's source, not
// its packages.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	maxPkgs := flag.Int("max-packages", 0, "exit 1 when there are more public packages (0: no limit)")
	maxExported := flag.Int("max-exported", 0, "exit 1 when there are more exported identifiers in all (0: no limit)")
	flag.Parse()
	pkgs, err := count(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apicount:", err)
		os.Exit(2)
	}
	total := 0
	for _, p := range pkgs {
		fmt.Printf("%-24s %4d  (%d funcs, %d types, %d methods)\n", p.Path, p.Total(), p.Funcs, p.Types, p.Methods)
		total += p.Total()
	}
	fmt.Printf("%d public packages, %d exported functions, types and methods\n", len(pkgs), total)
	if (*maxPkgs > 0 && len(pkgs) > *maxPkgs) || (*maxExported > 0 && total > *maxExported) {
		fmt.Fprintf(os.Stderr, "apicount: over the budget of %d packages and %d identifiers\n", *maxPkgs, *maxExported)
		os.Exit(1)
	}
}
