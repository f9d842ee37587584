package cardsig_test

import (
	"testing"

	"github.com/wopinterop/wopinterop/a2a/cardsig"
)

// The payload: RFC 8785 form of the card without signatures and without
// default values, as the reference SDKs compute it (A2A 1.0 §8.4.1).
func TestCanonicalize(t *testing.T) {
	for _, tc := range []struct{ name, card, want string }{
		{"members sorted, whitespace gone",
			`{ "name" : "A", "description":"d", "version":"1" }`,
			`{"description":"d","name":"A","version":"1"}`},
		{"signatures left out",
			`{"name":"A","signatures":[{"protected":"e30","signature":"AA"}]}`,
			`{"name":"A"}`},
		// A2A 1.0 §8.4.1's own example. The SDKs also drop the empty
		// description and skills that the example keeps; a payload is
		// only useful if both sides compute the same one (doc.go).
		{"the specification's example",
			`{"name":"Example Agent","description":"","capabilities":{"streaming":false,"pushNotifications":false,"extensions":[]},"skills":[]}`,
			`{"capabilities":{"pushNotifications":false,"streaming":false},"name":"Example Agent"}`},
		{"empty values dropped at any depth, then what they emptied",
			`{"name":"A","provider":{"organization":"","url":""},"skills":[{"id":"s","tags":[],"examples":["",""]}],"iconUrl":null,"x":{"y":{"z":[]}}}`,
			`{"name":"A","skills":[{"id":"s"}]}`},
		{"empty elements dropped from lists",
			`{"defaultInputModes":["","text/plain",null,{},[]]}`,
			`{"defaultInputModes":["text/plain"]}`},
		{"false kept in optional booleans and unknown members",
			`{"capabilities":{"streaming":false,"extendedAgentCard":false},"x-flag":false}`,
			`{"capabilities":{"extendedAgentCard":false,"streaming":false},"x-flag":false}`},
		{"false dropped from AgentExtension.required only",
			`{"capabilities":{"extensions":[{"uri":"u","required":false,"params":{"required":false}},{"uri":"v","required":true}]},"required":false}`,
			`{"capabilities":{"extensions":[{"params":{"required":false},"uri":"u"},{"required":true,"uri":"v"}]},"required":false}`},
		{"false dropped from AuthorizationCodeOAuthFlow.pkceRequired only",
			`{"securitySchemes":{"o":{"oauth2SecurityScheme":{"flows":{"authorizationCode":{"tokenUrl":"t","pkceRequired":false},"clientCredentials":{"tokenUrl":"t","pkceRequired":false}}}}}}`,
			`{"securitySchemes":{"o":{"oauth2SecurityScheme":{"flows":{"authorizationCode":{"tokenUrl":"t"},"clientCredentials":{"pkceRequired":false,"tokenUrl":"t"}}}}}}`},
		{"numbers in ECMAScript form (RFC 8785 §3.2.2.3)",
			`{"p":{"a":1.50,"b":1e21,"c":-0,"d":2.5E-1,"e":100}}`,
			`{"p":{"a":1.5,"b":1e+21,"c":0,"d":0.25,"e":100}}`},
		{"strings in minimal escapes (RFC 8785 §3.2.2.2)",
			`{"name":"\u00e9\u2028<>&\/\t"}`,
			"{\"name\":\"é\u2028<>&/\\t\"}"},
		{"an object that is all defaults",
			`{"description":"","skills":[]}`,
			`{}`},
	} {
		got, err := cardsig.Canonicalize([]byte(tc.card))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.name, got, err, tc.want)
		}
	}
}

// Canonicalize refuses what would make the card a client reads differ
// from the card verified.
func TestCanonicalizeRefuses(t *testing.T) {
	for name, card := range map[string]string{
		"duplicate member":        `{"name":"a","name":"b"}`,
		"nested duplicate member": `{"provider":{"url":"a","url":"b"}}`,
		"invalid UTF-8":           "{\"name\":\"\xc3\x28\"}",
		"lone surrogate":          `{"name":"\ud800"}`,
		"two values":              `{"name":"a"} {"name":"b"}`,
		"a string":                `"card"`,
	} {
		if _, err := cardsig.Canonicalize([]byte(card)); err == nil {
			t.Errorf("%s: canonicalized", name)
		}
	}
}
