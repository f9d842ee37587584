package nodepeer

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMajorOf(t *testing.T) {
	for in, want := range map[string]int{"v22.23.5\n": 22, "v9.1.0": 9, "22.1.0": 0, "": 0, "vx.1": 0} {
		if got := majorOf([]byte(in)); got != want {
			t.Errorf("majorOf(%q) = %d, want %d", in, got, want)
		}
	}
}

func TestModuleRootHoldsGoMod(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("moduleRoot %s: %v", root, err)
	}
	if filepath.Base(root) == "nodepeer" {
		t.Fatalf("moduleRoot stopped at the package directory %s", root)
	}
}

func TestBuffer(t *testing.T) {
	var b Buffer
	_, _ = b.Write([]byte("a"))
	_, _ = b.Write([]byte("b"))
	if b.String() != "ab" {
		t.Fatalf("Buffer = %q", b.String())
	}
}
