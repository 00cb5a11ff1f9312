/**
 * The idle guest's boot sector program as a listing: each line its bytes and instruction, with the
 * operands that name a label left for the assembler (idle-guest.ts) to resolve. The screen it draws
 * and the loop that sleeps in HLT between interrupts are described in idle-guest.ts.
 */

export const IDLE_GUEST_BANNER = 'VDI Portal idle desktop - type to echo';
/** The BIOS loads the boot sector at 0000:7C00 and jumps there. */
export const LOAD_ADDRESS = 0x7c00;

// Text attributes: high nibble background, low nibble foreground (bit 7 = blink, never set).
const ATTR_BAR = 0x70; // black on light grey
const ATTR_PANEL = 0x1f; // bright white on blue
const ATTR_ECHO = 0x0f; // bright white on black
/** First row of the echo area (its prompt is the last thing drawn before the guest sleeps). */
export const ECHO_TOP = 14;
/** Last row of the echo area. */
export const ECHO_BOTTOM = 23;

/**
 * One line of the listing: its bytes, plus an optional trailing operand resolved in the second pass
 * (rel8 / rel16: signed distance from the end of the instruction; abs16: the label's address).
 */
export interface Line {
  label?: string;
  bytes?: number[];
  fix?: { kind: 'rel8' | 'rel16' | 'abs16'; target: string };
  asm: string;
}

export const lo = (word: number) => word & 0xff;
export const hi = (word: number) => (word >> 8) & 0xff;
const ascii = (text: string) => [...Buffer.from(text, 'latin1')];

/** Text records for the start-up screen: row, column, attribute, text, 0. 0xFF ends the table. */
const SCREEN_TEXT: readonly [row: number, col: number, attr: number, text: string][] = [
  [0, 2, ATTR_BAR, IDLE_GUEST_BANNER],
  [3, 4, ATTR_PANEL, 'A boot sector that sleeps in HLT between interrupts,'],
  [4, 4, ATTR_PANEL, 'so running desktops cost almost no host CPU.'],
  [24, 2, ATTR_BAR, 'Type: keys echo below. Enter: new line. Backspace: erase'],
];

/**
 * The boot sector program (16-bit real mode, CS:IP = 0000:7C00, DL = boot drive, ignored).
 * Register use: DH,DL = row,column for the output routines; BL = attribute; SI = string pointer.
 * BIOS calls used: int 10h AH=00 set mode, 01 cursor shape, 02 set cursor, 03 get cursor,
 * 06 scroll up / clear window, 09 write character + attribute; int 16h AH=00 read key, 01 peek key.
 */
export function program(): Line[] {
  const fill = (attr: number, top: number, bottom: number, what: string): Line[] => [
    {
      bytes: [0xb8, 0x00, 0x06],
      asm: `mov ax,0x0600      ; AH=06 scroll up, AL=0: clear window (${what})`,
    },
    { bytes: [0xb7, attr], asm: `mov bh,0x${attr.toString(16)}         ; fill attribute` },
    {
      bytes: [0xb9, 0x00, top],
      asm: `mov cx,0x${top.toString(16).padStart(2, '0')}00       ; CH,CL = top row, left column`,
    },
    {
      bytes: [0xba, 79, bottom],
      asm: `mov dx,0x${bottom.toString(16).padStart(2, '0')}4f       ; DH,DL = bottom row, right column 79`,
    },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
  ];
  const text: Line[] = SCREEN_TEXT.map(([row, col, attr, s], i) => ({
    ...(i === 0 ? { label: 'texts' } : {}),
    bytes: [row, col, attr, ...ascii(s), 0],
    asm: `db ${row},${col},0x${attr.toString(16)},"${s}",0`,
  }));
  return [
    // --- set up segments and stack, screen ---
    {
      label: 'start',
      bytes: [0xfa],
      asm: 'cli                 ; no interrupts while SS:SP changes',
    },
    { bytes: [0x31, 0xc0], asm: 'xor ax,ax' },
    {
      bytes: [0x8e, 0xd8],
      asm: 'mov ds,ax           ; DS=0: labels are absolute addresses 7C00h+',
    },
    { bytes: [0x8e, 0xc0], asm: 'mov es,ax' },
    { bytes: [0x8e, 0xd0], asm: 'mov ss,ax' },
    {
      bytes: [0xbc, lo(LOAD_ADDRESS), hi(LOAD_ADDRESS)],
      asm: 'mov sp,0x7c00       ; stack grows down below the code',
    },
    { bytes: [0xfb], asm: 'sti' },
    { bytes: [0xfc], asm: 'cld                 ; lodsb moves forward' },
    {
      bytes: [0xb8, 0x03, 0x00],
      asm: 'mov ax,0x0003       ; AH=00 set video mode, AL=03: 80x25 16-colour text',
    },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0xb4, 0x01], asm: 'mov ah,0x01         ; AH=01 set cursor shape' },
    {
      bytes: [0xb9, 0x00, 0x20],
      asm: 'mov cx,0x2000       ; CH bit 5: hardware cursor off (no blinking; "_" is drawn)',
    },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    ...fill(ATTR_BAR, 0, 0, 'title bar, row 0'),
    ...fill(ATTR_PANEL, 1, ECHO_TOP - 1, `blue panel, rows 1..${ECHO_TOP - 1}`),
    ...fill(ATTR_BAR, 24, 24, 'status bar, row 24'),
    // --- start-up text from the SCREEN_TEXT table ---
    { bytes: [0xbe], fix: { kind: 'abs16', target: 'texts' }, asm: 'mov si,texts' },
    { label: 'next_text', bytes: [0xac], asm: 'lodsb               ; AL = row, or FFh at the end' },
    { bytes: [0x3c, 0xff], asm: 'cmp al,0xff' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'texts_done' }, asm: 'je texts_done' },
    { bytes: [0x88, 0xc6], asm: 'mov dh,al           ; row' },
    { bytes: [0xac], asm: 'lodsb' },
    { bytes: [0x88, 0xc2], asm: 'mov dl,al           ; column' },
    { bytes: [0xac], asm: 'lodsb' },
    { bytes: [0x88, 0xc3], asm: 'mov bl,al           ; attribute' },
    {
      bytes: [0xe8],
      fix: { kind: 'rel16', target: 'puts' },
      asm: 'call puts           ; SI ends past the 0',
    },
    { bytes: [0xeb], fix: { kind: 'rel8', target: 'next_text' }, asm: 'jmp next_text' },
    {
      label: 'texts_done',
      bytes: [0xba, 0x00, ECHO_TOP],
      asm: `mov dx,0x${ECHO_TOP.toString(16)}00       ; first echo row, column 0`,
    },
    { bytes: [0xe8], fix: { kind: 'rel16', target: 'prompt' }, asm: 'call prompt' },
    // --- idle loop: sleep until an interrupt, then drain the keyboard buffer ---
    {
      label: 'idle',
      bytes: [0xfb],
      asm: 'sti                 ; (its one-instruction shadow keeps an IRQ from slipping in before hlt)',
    },
    { bytes: [0xf4], asm: 'hlt                 ; sleep until the timer tick or a key' },
    {
      label: 'poll',
      bytes: [0xb4, 0x01],
      asm: 'mov ah,0x01         ; int 16h AH=01: key waiting? ZF=1 when none',
    },
    { bytes: [0xcd, 0x16], asm: 'int 0x16' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'idle' }, asm: 'jz idle' },
    { bytes: [0x30, 0xe4], asm: 'xor ah,ah           ; int 16h AH=00: take the key, AL = ASCII' },
    { bytes: [0xcd, 0x16], asm: 'int 0x16' },
    { bytes: [0xe8], fix: { kind: 'rel16', target: 'key' }, asm: 'call key' },
    { bytes: [0xeb], fix: { kind: 'rel8', target: 'poll' }, asm: 'jmp poll' },
    // --- key: echo AL at the cursor (the "_" mark's position, kept by the BIOS) ---
    { label: 'key', bytes: [0x50], asm: 'push ax' },
    {
      bytes: [0xb4, 0x03],
      asm: 'mov ah,0x03         ; AH=03 get cursor: DH,DL (and CX, clobbered)',
    },
    { bytes: [0xb7, 0x00], asm: 'mov bh,0x00         ; page 0' },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0x58], asm: 'pop ax' },
    {
      bytes: [0xb3, ATTR_ECHO],
      asm: `mov bl,0x${ATTR_ECHO.toString(16).padStart(2, '0')}         ; echo attribute`,
    },
    { bytes: [0x3c, 0x0d], asm: 'cmp al,0x0d         ; Enter' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'enter' }, asm: 'je enter' },
    { bytes: [0x3c, 0x08], asm: 'cmp al,0x08         ; Backspace' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'back' }, asm: 'je back' },
    { bytes: [0x3c, 0x20], asm: 'cmp al,0x20' },
    {
      bytes: [0x72],
      fix: { kind: 'rel8', target: 'key_ret' },
      asm: 'jb key_ret          ; other control keys, extended keys (AL=0): ignored',
    },
    { bytes: [0x3c, 0x7e], asm: 'cmp al,0x7e' },
    {
      bytes: [0x77],
      fix: { kind: 'rel8', target: 'key_ret' },
      asm: 'ja key_ret          ; not printable ASCII: ignored',
    },
    {
      bytes: [0xe8],
      fix: { kind: 'rel16', target: 'putat' },
      asm: 'call putat          ; the character replaces the mark',
    },
    { bytes: [0xfe, 0xc2], asm: 'inc dl' },
    { bytes: [0x80, 0xfa, 80], asm: 'cmp dl,80' },
    {
      bytes: [0x72],
      fix: { kind: 'rel8', target: 'mark' },
      asm: 'jb mark             ; (mark returns to our caller)',
    },
    {
      bytes: [0xeb],
      fix: { kind: 'rel8', target: 'newline' },
      asm: 'jmp newline         ; line full: wrap',
    },
    { label: 'back', bytes: [0x80, 0xfa, 0x02], asm: 'cmp dl,2' },
    {
      bytes: [0x76],
      fix: { kind: 'rel8', target: 'key_ret' },
      asm: 'jbe key_ret         ; never erase the "> " prompt',
    },
    { bytes: [0xb0, 0x20], asm: "mov al,' '" },
    {
      bytes: [0xe8],
      fix: { kind: 'rel16', target: 'putat' },
      asm: 'call putat          ; erase the mark',
    },
    { bytes: [0xfe, 0xca], asm: 'dec dl' },
    {
      bytes: [0xeb],
      fix: { kind: 'rel8', target: 'mark' },
      asm: 'jmp mark            ; the mark replaces the erased character',
    },
    { label: 'enter', bytes: [0xb0, 0x20], asm: "mov al,' '" },
    {
      bytes: [0xe8],
      fix: { kind: 'rel16', target: 'putat' },
      asm: 'call putat          ; erase the mark',
    },
    { label: 'newline', bytes: [0xb2, 0x00], asm: 'mov dl,0' },
    { bytes: [0xfe, 0xc6], asm: 'inc dh' },
    { bytes: [0x80, 0xfe, ECHO_BOTTOM + 1], asm: `cmp dh,${ECHO_BOTTOM + 1}` },
    {
      bytes: [0x72],
      fix: { kind: 'rel8', target: 'prompt' },
      asm: 'jb prompt           ; still inside the echo area',
    },
    { bytes: [0x52], asm: 'push dx' },
    { bytes: [0xb8, 0x01, 0x06], asm: 'mov ax,0x0601       ; AH=06 scroll up, AL=1 line' },
    {
      bytes: [0xb7, ATTR_ECHO],
      asm: `mov bh,0x${ATTR_ECHO.toString(16).padStart(2, '0')}         ; attribute of the new blank line`,
    },
    {
      bytes: [0xb9, 0x00, ECHO_TOP],
      asm: `mov cx,0x${ECHO_TOP.toString(16)}00       ; the echo area only`,
    },
    { bytes: [0xba, 79, ECHO_BOTTOM], asm: `mov dx,0x${ECHO_BOTTOM.toString(16)}4f` },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0x5a], asm: 'pop dx' },
    { bytes: [0xb6, ECHO_BOTTOM], asm: `mov dh,${ECHO_BOTTOM}            ; stay on the last row` },
    // --- prompt: "> " at DH,DL then the mark; mark: "_" at DH,DL ---
    {
      label: 'prompt',
      bytes: [0xb3, ATTR_ECHO],
      asm: `mov bl,0x${ATTR_ECHO.toString(16).padStart(2, '0')}`,
    },
    { bytes: [0xbe], fix: { kind: 'abs16', target: 'prompt_text' }, asm: 'mov si,prompt_text' },
    { bytes: [0xe8], fix: { kind: 'rel16', target: 'puts' }, asm: 'call puts' },
    { label: 'mark', bytes: [0xb0, 0x5f], asm: "mov al,'_'          ; falls through into putat" },
    // --- putat: AL with attribute BL at row DH column DL of page 0; keeps AL, BL, CX, DX ---
    { label: 'putat', bytes: [0x51], asm: 'push cx' },
    { bytes: [0x50], asm: 'push ax' },
    { bytes: [0xb4, 0x02], asm: 'mov ah,0x02         ; AH=02 set cursor position DH,DL' },
    { bytes: [0xb7, 0x00], asm: 'mov bh,0x00         ; page 0' },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0x58], asm: 'pop ax' },
    {
      bytes: [0xb4, 0x09],
      asm: 'mov ah,0x09         ; AH=09 write AL with attribute BL, CX times',
    },
    { bytes: [0xb9, 0x01, 0x00], asm: 'mov cx,1' },
    { bytes: [0xcd, 0x10], asm: 'int 0x10' },
    { bytes: [0x59], asm: 'pop cx' },
    { label: 'key_ret', bytes: [0xc3], asm: 'ret' },
    // --- puts: the 0-terminated string at SI from DH,DL on, attribute BL; DL ends past it ---
    { label: 'puts', bytes: [0xac], asm: 'lodsb' },
    { bytes: [0x84, 0xc0], asm: 'test al,al' },
    { bytes: [0x74], fix: { kind: 'rel8', target: 'puts_ret' }, asm: 'jz puts_ret' },
    { bytes: [0xe8], fix: { kind: 'rel16', target: 'putat' }, asm: 'call putat' },
    { bytes: [0xfe, 0xc2], asm: 'inc dl' },
    { bytes: [0xeb], fix: { kind: 'rel8', target: 'puts' }, asm: 'jmp puts' },
    { label: 'puts_ret', bytes: [0xc3], asm: 'ret' },
    // --- data ---
    { label: 'prompt_text', bytes: [...ascii('> '), 0], asm: 'db "> ",0' },
    ...text,
    { bytes: [0xff], asm: 'db 0xff             ; end of the text table' },
  ];
}
