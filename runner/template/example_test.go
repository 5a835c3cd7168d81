package template_test

import (
	"fmt"

	"github.com/ration-run/ration/runner/template"
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
