package template_test

import (
	"fmt"

	"github.com/ration-run/ration/internal/template"
)

func ExampleTemplate_Expand() {
	t, _ := template.Parse([]string{"convert", "{}", "{.}.png"}, false)
	fmt.Printf("%q\n", t.Expand("my photo.jpg", 1, 1))
	s, _ := template.Parse([]string{"gzip", "<", "{}", ">", "{}.gz"}, true)
	fmt.Println(s.Display("it's.txt", 1, 1))
	// Output:
	// ["convert" "my photo.jpg" "my photo.png"]
	// gzip < 'it'"'"'s.txt' > 'it'"'"'s.txt'.gz
}

func ExampleParseOptions() {
	// {} with one field; -X repeats the word holding {} per field.
	t, _ := template.ParseOptions([]string{"cp", "{}", "{/.}.bak"}, template.Options{})
	fmt.Printf("%q\n", t.ExpandFields([]string{"src/a.go"}, 1, 1))
	x, _ := template.ParseOptions([]string{"tar", "cf", "out.tar", "./{}"}, template.Options{Context: true})
	fmt.Printf("%q\n", x.ExpandFields([]string{"a", "b"}, 1, 1))
	_, err := template.Parse([]string{"mv", "log.{}", "log.{= $_++ =}"}, false)
	fmt.Println(err != nil)
	// Output:
	// ["cp" "src/a.go" "a.bak"]
	// ["tar" "cf" "out.tar" "./a" "./b"]
	// true
}
