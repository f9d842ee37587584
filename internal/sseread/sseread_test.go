package sseread

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wopinterop/wopinterop/egress"
)

func TestSSEData(t *testing.T) {
	body := ": hello\n\ndata: {\"a\":\r\ndata:1}\r\n\r\nevent: x\nid: 7\n\ndata\n\ndata: last"
	var got []string
	for data, err := range Data(strings.NewReader(body), 64) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	// Comments and fields without data dispatch nothing; "data" alone is
	// an empty line of data; an event the stream ends inside is dropped.
	if want := []string{"{\"a\":\n1}", ""}; !slices.Equal(got, want) {
		t.Fatalf("events %q, want %q", got, want)
	}
	n := 0
	for _, err := range Data(strings.NewReader("data: "+strings.Repeat("x", 64)+"\n\n"), 64) {
		var tl *egress.TooLargeError
		if n++; !errors.As(err, &tl) {
			t.Fatalf("an oversized event: %v", err)
		}
	}
	if n != 1 {
		t.Fatalf("%d yields for an oversized event, want one error", n)
	}
}
