package schemacheck

import (
	"bytes"
	"errors"
	"fmt"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Cache compiles each input schema once. A compiled schema is a pure
// function of its text and reveals nothing but that text, so the text is
// the key; which schema a caller may see is decided by whoever looks the
// workflow up, never by this cache. Safe for concurrent use.
type Cache struct {
	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema
}

// maxSchemas bounds a Cache; a full cache starts over.
const maxSchemas = 4096

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{compiled: map[string]*jsonschema.Schema{}}
}

// Compile returns the compiled form of raw, a self-contained JSON Schema
// object (2020-12 unless it says otherwise). External references are
// refused: compiling a schema never reaches the file system or the
// network.
func (c *Cache) Compile(raw []byte) (*jsonschema.Schema, error) {
	key := string(raw)
	c.mu.Lock()
	sch, ok := c.compiled[key]
	c.mu.Unlock()
	if ok {
		return sch, nil
	}
	sch, err := compileSelfContained(raw)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.compiled) >= maxSchemas {
		clear(c.compiled)
	}
	c.compiled[key] = sch
	c.mu.Unlock()
	return sch, nil
}

// ErrNotObject is the refusal of a schema document that is not a JSON
// object.
var ErrNotObject = errors.New("schemacheck: schema is not a JSON object")

// denyLoader refuses every external reference.
type denyLoader struct{}

func (denyLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("schemacheck: external schema reference %q is not allowed", url)
}

func compileSelfContained(doc []byte) (*jsonschema.Schema, error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, ErrNotObject
	}
	const url = "mem://schemacheck/input.json"
	c := jsonschema.NewCompiler()
	c.UseLoader(denyLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(url, v); err != nil {
		return nil, err
	}
	return c.Compile(url)
}
