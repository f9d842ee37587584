package mcpfixtures

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
)

// redPixelPNG returns a 1×1 red PNG, the image of the image fixtures.
func redPixelPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 0xff, A: 0xff})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic("mcpfixtures: encoding a 1x1 PNG cannot fail: " + err.Error())
	}
	return b.Bytes()
}

// silentWAV returns a short PCM WAV (8 kHz, mono, 8-bit, 8 samples of
// silence), the audio of the audio fixture.
func silentWAV() []byte {
	const rate, samples = 8000, 8
	var b bytes.Buffer
	le := binary.LittleEndian
	b.WriteString("RIFF")
	b.Write(le.AppendUint32(nil, 36+samples))
	b.WriteString("WAVEfmt ")
	b.Write(le.AppendUint32(nil, 16))   // fmt chunk size
	b.Write(le.AppendUint16(nil, 1))    // PCM
	b.Write(le.AppendUint16(nil, 1))    // mono
	b.Write(le.AppendUint32(nil, rate)) // sample rate
	b.Write(le.AppendUint32(nil, rate)) // byte rate
	b.Write(le.AppendUint16(nil, 1))    // block align
	b.Write(le.AppendUint16(nil, 8))    // bits per sample
	b.WriteString("data")
	b.Write(le.AppendUint32(nil, samples))
	b.Write(bytes.Repeat([]byte{0x80}, samples)) // 8-bit silence is 128
	return b.Bytes()
}
