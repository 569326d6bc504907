#include "textflag.h"

// func Prefetch(p unsafe.Pointer)
TEXT ·Prefetch(SB), NOSPLIT|NOFRAME, $0-8
	MOVD	p+0(FP), R0
	PRFM	(R0), PLDL1KEEP
	RET

// func PrefetchRange(p unsafe.Pointer, n uintptr) (lines int)
TEXT ·PrefetchRange(SB), NOSPLIT|NOFRAME, $0-24
	MOVD	p+0(FP), R0
	MOVD	n+8(FP), R1
	MOVD	ZR, R2
	CBZ	R1, done
	ADD	R0, R1, R1
	SUB	$1, R1, R1   // the last byte
	AND	$-64, R0, R0 // the first byte's line
loop:
	PRFM	(R0), PLDL1KEEP
	ADD	$1, R2, R2
	ADD	$64, R0, R0
	CMP	R1, R0
	BLS	loop // while the line starts at or before the last byte
done:
	MOVD	R2, lines+16(FP)
	RET
