package picture

import "encoding/binary"

// exifOrientation returns the EXIF orientation (1–8) of a JPEG file, or 1
// when it has none or the EXIF block is malformed: a broken tag is not
// worth refusing an image over.
func exifOrientation(data []byte) int {
	pos := 2 // after SOI
	for pos+4 <= len(data) {
		if data[pos] != 0xff {
			return 1
		}
		marker := data[pos+1]
		if marker == 0xff { // fill byte
			pos++
			continue
		}
		if marker == 0xda || marker == 0xd9 { // scan data or end: no more headers
			return 1
		}
		n := int(binary.BigEndian.Uint16(data[pos+2:]))
		if n < 2 || pos+2+n > len(data) {
			return 1
		}
		seg := data[pos+4 : pos+2+n]
		if marker == 0xe1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			return tiffOrientation(seg[6:])
		}
		pos += 2 + n
	}
	return 1
}

// tiffOrientation reads tag 0x0112 of IFD0 of a TIFF structure.
func tiffOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:4]) {
	case "II*\x00":
		bo = binary.LittleEndian
	case "MM\x00*":
		bo = binary.BigEndian
	default:
		return 1
	}
	ifd := int64(bo.Uint32(t[4:]))
	if ifd < 8 || ifd+2 > int64(len(t)) {
		return 1
	}
	n := int64(bo.Uint16(t[ifd:]))
	for i := range n {
		e := ifd + 2 + 12*i
		if e+12 > int64(len(t)) {
			return 1
		}
		if bo.Uint16(t[e:]) != 0x0112 {
			continue
		}
		if bo.Uint16(t[e+2:]) != 3 { // SHORT
			return 1
		}
		if v := int(bo.Uint16(t[e+8:])); v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}

// orient returns m turned upright from EXIF orientation o: the image that
// viewers show.
func (m *RGB) orient(o int) *RGB {
	if o <= 1 || o > 8 {
		return m
	}
	W, H := m.W, m.H
	out := &RGB{W: W, H: H, Pix: make([]uint8, len(m.Pix))}
	if o >= 5 {
		out.W, out.H = H, W
	}
	// src maps an output pixel to the source pixel shown there.
	src := map[int]func(x, y int) (int, int){
		2: func(x, y int) (int, int) { return W - 1 - x, y },
		3: func(x, y int) (int, int) { return W - 1 - x, H - 1 - y },
		4: func(x, y int) (int, int) { return x, H - 1 - y },
		5: func(x, y int) (int, int) { return y, x },
		6: func(x, y int) (int, int) { return y, H - 1 - x },
		7: func(x, y int) (int, int) { return W - 1 - y, H - 1 - x },
		8: func(x, y int) (int, int) { return W - 1 - y, x },
	}[o]
	i := 0
	for y := range out.H {
		for x := range out.W {
			sx, sy := src(x, y)
			j := (sy*W + sx) * 3
			copy(out.Pix[i:i+3], m.Pix[j:j+3])
			i += 3
		}
	}
	return out
}
