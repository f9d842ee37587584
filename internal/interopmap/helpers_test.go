package interopmap

import (
	"fmt"
	"os"
)

// builtinPath is the library's own map, the one mapping embeds and serves
// as mapping.Builtin (whose tests prove the file is what it embeds).
const builtinPath = "../../mapping/data/interopmap.json"

// builtin decodes the library's own map afresh, as mapping.Builtin does.
func builtin() *Map {
	data, err := os.ReadFile(builtinPath)
	if err != nil {
		panic(err)
	}
	m, problems, err := Decode(data)
	if err != nil || len(problems) > 0 {
		panic(fmt.Sprintf("%s: %v %v", builtinPath, err, problems))
	}
	return m
}

// allFacets says yes to every facet; facetsExcept to all but the named ones.
func allFacets(string) bool { return true }

func facetsExcept(off ...string) func(string) bool {
	return func(f string) bool {
		for _, o := range off {
			if f == o {
				return false
			}
		}
		return true
	}
}
