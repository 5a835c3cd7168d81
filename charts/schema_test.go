package charts

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func readSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		t.Fatal("values.schema.json is not an object")
	}
	return m
}

// offlineLoader refuses every URL, so compiling proves the schema needs
// nothing outside the file (helm would otherwise fetch http refs).
type offlineLoader struct{}

func (offlineLoader) Load(url string) (any, error) {
	return nil, errors.New("schema must be self-contained, but it loads " + url)
}

func TestSchemaSelfContained(t *testing.T) {
	s := readSchema(t)
	c := jsonschema.NewCompiler()
	c.UseLoader(offlineLoader{})
	if err := c.AddResource("file:///values.schema.json", s); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("file:///values.schema.json"); err != nil {
		t.Fatalf("compile without network: %v", err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch n := v.(type) {
		case []any:
			for _, e := range n {
				walk(path+"[]", e)
			}
		case map[string]any:
			if ref, ok := n["$ref"].(string); ok && !strings.HasPrefix(ref, "#") {
				t.Errorf("%s: $ref %q leaves the file", path, ref)
			}
			for k, e := range n {
				walk(path+"/"+k, e)
			}
		}
	}
	walk("", s)
}

// TestSchemaClosed checks that every object in the schema rejects unknown
// keys: objects with properties set additionalProperties to false; the
// free-form maps (labels, annotations, nodeSelector) constrain their values.
// The only open object is Helm's "global", which parent charts fill.
func TestSchemaClosed(t *testing.T) {
	s := readSchema(t)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch n := v.(type) {
		case []any:
			for _, e := range n {
				walk(path+"[]", e)
			}
		case map[string]any:
			_, hasProps := n["properties"]
			isObject := n["type"] == "object"
			// A "properties" inside if/then only narrows the enclosing
			// object, which is closed itself.
			conditional := strings.HasSuffix(path, "/if") || strings.HasSuffix(path, "/then")
			switch ap, hasAP := n["additionalProperties"]; {
			case conditional:
			case hasProps && ap != false:
				t.Errorf("%s: has properties but additionalProperties is %v, want false", path, ap)
			case isObject && !hasProps && !hasAP && path != "/properties/global":
				t.Errorf("%s: object without properties or additionalProperties accepts anything", path)
			}
			for k, e := range n {
				walk(path+"/"+k, e)
			}
		}
	}
	walk("", s)
	props := s["properties"].(map[string]any)
	shards := props["shards"].(map[string]any)
	if min, ok := shards["minimum"]; !ok || min.(interface{ String() string }).String() != "1" {
		t.Errorf("shards minimum = %v, want 1", shards["minimum"])
	}
}
