package helm

import (
	"bytes"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// schemas validates release values against a chart's values.schema.json as
// Helm's install and upgrade do, with each schema compiled once. Helm
// compiles it again for every action, which a cold install of many resources
// of one chart pays for each of them. It is safe for concurrent use.
//
// It takes only what it can validate exactly as Helm would: a chart without
// subcharts (Helm validates those after disabling some by their conditions)
// whose schema refers to no other document (Helm would fetch http and urn
// references on every action). For any other chart, Helm validates.
type schemas struct {
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema // by the schema's text; nil: Helm validates
}

// schemaURL is where Helm puts a chart's schema for its compiler; its
// validation errors name it, and Helm cuts that line off.
const schemaURL = "file:///values.schema.json"

// validate validates vals, the values given to an install or upgrade of
// chrt, and says whether Helm may skip its own validation: false when Helm
// must validate them instead. err is Helm's error for them, word for word.
func (s *schemas) validate(chrt *chart.Chart, vals map[string]any) (validated bool, err error) {
	if chrt.Schema == nil || len(chrt.Dependencies()) > 0 || len(vals) == 0 {
		// No schema; subcharts; or no values, which an upgrade replaces by the
		// current revision's.
		return false, nil
	}
	schema := s.get(chrt.Schema)
	if schema == nil {
		return false, nil
	}
	coalesced, err := chartutil.CoalesceValues(chrt, vals)
	if err != nil {
		return false, nil // Helm reports it
	}
	if err := schema.Validate(coalesced.AsMap()); err != nil {
		msg := strings.TrimPrefix(err.Error(), "jsonschema validation failed with '"+schemaURL+"#'\n")
		//nolint:staticcheck // Helm's error, word for word, ends with a newline.
		return true, fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s:\n%s\n", chrt.Name(), msg)
	}
	return true, nil
}

// get returns the compiled schema of text, compiling it the first time; nil
// when it does not compile on its own.
func (s *schemas) get(text []byte) *jsonschema.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	if schema, ok := s.compiled[string(text)]; ok {
		return schema
	}
	if s.compiled == nil {
		s.compiled = map[string]*jsonschema.Schema{}
	}
	s.compiled[string(text)] = compile(text)
	return s.compiled[string(text)]
}

// compile compiles a schema that refers to no other document; nil otherwise,
// or when it does not compile.
func compile(text []byte) (schema *jsonschema.Schema) {
	defer func() {
		if recover() != nil { // Helm recovers from the compiler's panics too
			schema = nil
		}
	}()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil
	}
	schema, err = c.Compile(schemaURL)
	if err != nil {
		return nil
	}
	return schema
}

// noLoader loads no document: a schema that refers to one is left to Helm.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s: not loaded", url)
}
