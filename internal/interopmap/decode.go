package interopmap

import (
	"bytes"
	"encoding/json"
)

// Decode reads an interop-map document (a member the format does not
// define is refused), runs the consistency checks and indexes it. A
// document that does not decode returns the JSON error; one that breaks a
// consistency rule returns every broken rule and no Map.
//
// Decode does not validate against the JSON Schema: mapping.Load does that
// first, and the embedded map is proved to pass it by mapping's tests.
func Decode(data []byte) (*Map, []Inconsistency, error) {
	var doc document
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, err
	}
	if problems := check(&doc); len(problems) > 0 {
		return nil, problems, nil
	}
	return build(&doc), nil, nil
}
