package mcpfixtures

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"testing"
)

func TestMedia(t *testing.T) {
	img, err := png.Decode(bytes.NewReader(redPixelPNG()))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 1 || b.Dy() != 1 {
		t.Fatalf("image is %v", b)
	}
	if r, g, b, a := img.At(0, 0).RGBA(); r != 0xffff || g != 0 || b != 0 || a != 0xffff {
		t.Fatalf("pixel is %v %v %v %v, want red", r, g, b, a)
	}
	wav := silentWAV()
	le := binary.LittleEndian
	if string(wav[:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " || string(wav[36:40]) != "data" ||
		int(le.Uint32(wav[4:8])) != len(wav)-8 || int(le.Uint32(wav[40:44])) != len(wav)-44 {
		t.Fatalf("malformed WAV header % x", wav[:44])
	}
}
