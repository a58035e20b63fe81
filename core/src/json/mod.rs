//! A compact JSON writer producing exactly `serde_json::to_string`'s bytes.
//!
//! Guarantee: for every value whose serde_json serialization succeeds, [`to_string`]
//! returns the same string, byte for byte. The durable log (`log.rs`) and the message
//! JSON that checkers and digests compare are written with it, and their bytes are the
//! engine's on-disk format, so the guarantee is checked against serde_json by the
//! property suite in `tests/json_writer.rs` (generated records, messages and JSON
//! values) and by the differential fuzz target `json_writer`.
//!
//! Why it exists: serde_json escapes strings one byte per step and writes through
//! `io::Write` with an error path per fragment; every engine step serializes a log
//! record, and that was the largest single cost of the engine in the simulator's
//! profile. This writer appends to a `String` and escapes with [`escape::write_str`].
//! Everything else follows serde_json's compact format: no whitespace, struct fields
//! in order, enums externally tagged as serde defines, `None` and units as `null`,
//! bytes as an array of numbers, non-finite floats as `null`, map keys that are
//! numbers or booleans quoted. Floats are formatted by serde_json itself (they are rare
//! here and its shortest-round-trip formatting must not be reimplemented).

mod escape;
mod keys;
mod wire;

pub use escape::write_str;
pub use wire::{messages_to_json, write_message, write_messages, write_tool_calls};

use serde::ser::{self, Serialize};

type Error = serde_json::Error;

/// The JSON text of `value`, identical to `serde_json::to_string(value)`.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    let mut out = String::with_capacity(128);
    write(&mut out, value)?;
    Ok(out)
}

/// Appends the JSON text of `value` to `out`. On error `out` may hold part of it.
pub fn write<T: Serialize + ?Sized>(out: &mut String, value: &T) -> Result<(), Error> {
    value.serialize(&mut Writer { out })
}

/// The serializer: a borrowed output string.
pub struct Writer<'o> {
    out: &'o mut String,
}

/// The token serde_json's `RawValue` serializes as a struct name and field name; its
/// field is written verbatim. Core's types hold no `RawValue`, but the writer is
/// generic, so it keeps serde_json's behaviour rather than quoting the raw text.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Decimal digits of an unsigned integer, as serde_json (itoa) writes them.
pub fn push_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for &d in &buf[at..] {
        out.push(char::from(d));
    }
}

fn push_i64(out: &mut String, n: i64) {
    if n < 0 {
        out.push('-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Floats go through serde_json so their shortest representation is its own.
fn push_float<T: Serialize>(out: &mut String, v: T) -> Result<(), Error> {
    out.push_str(&serde_json::to_string(&v)?);
    Ok(())
}

impl<'s, 'o> ser::Serializer for &'s mut Writer<'o> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'s, 'o>;
    type SerializeTuple = Compound<'s, 'o>;
    type SerializeTupleStruct = Compound<'s, 'o>;
    type SerializeTupleVariant = Compound<'s, 'o>;
    type SerializeMap = Compound<'s, 'o>;
    type SerializeStruct = Compound<'s, 'o>;
    type SerializeStructVariant = Compound<'s, 'o>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(i64::from(v))
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        push_i64(self.out, v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.out.push_str(&v.to_string());
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.serialize_u64(u64::from(v))
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        push_u64(self.out, v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.out.push_str(&v.to_string());
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        push_float(self.out, v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        push_float(self.out, v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        write_str(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        write_str(self.out, v);
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        use ser::SerializeSeq;
        let mut seq = self.serialize_seq(Some(v.len()))?;
        for b in v {
            seq.serialize_element(b)?;
        }
        seq.end()
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.out.push_str("null");
        Ok(())
    }
    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.out.push('{');
        write_str(self.out, variant);
        self.out.push(':');
        v.serialize(&mut *self)?;
        self.out.push('}');
        Ok(())
    }
    fn serialize_seq(self, _len: Option<usize>) -> Result<Compound<'s, 'o>, Error> {
        self.out.push('[');
        Ok(Compound::new(self))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'s, 'o>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        len: usize,
    ) -> Result<Compound<'s, 'o>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'s, 'o>, Error> {
        self.out.push('{');
        write_str(self.out, variant);
        self.out.push_str(":[");
        Ok(Compound::new(self))
    }
    fn serialize_map(self, _len: Option<usize>) -> Result<Compound<'s, 'o>, Error> {
        self.out.push('{');
        Ok(Compound::new(self))
    }
    fn serialize_struct(self, name: &'static str, len: usize) -> Result<Compound<'s, 'o>, Error> {
        if name == RAW_VALUE_TOKEN {
            return Ok(Compound {
                ser: self,
                first: true,
                raw: true,
            });
        }
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Compound<'s, 'o>, Error> {
        self.out.push('{');
        write_str(self.out, variant);
        self.out.push_str(":{");
        Ok(Compound::new(self))
    }
}

/// An array, object or variant being written: whether the next element needs a comma.
pub struct Compound<'s, 'o> {
    ser: &'s mut Writer<'o>,
    first: bool,
    /// A serde_json `RawValue`: its one field is the JSON text itself.
    raw: bool,
}

impl<'s, 'o> Compound<'s, 'o> {
    fn new(ser: &'s mut Writer<'o>) -> Self {
        Compound {
            ser,
            first: true,
            raw: false,
        }
    }

    #[inline]
    fn comma(&mut self) {
        if self.first {
            self.first = false;
        } else {
            self.ser.out.push(',');
        }
    }

    fn element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.comma();
        v.serialize(&mut *self.ser)
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, v: &T) -> Result<(), Error> {
        if self.raw {
            // The field is the text of a `RawValue` (a string); it is written unquoted.
            if let serde_json::Value::String(text) = serde_json::to_value(v)? {
                self.ser.out.push_str(&text);
                return Ok(());
            }
            return Err(ser::Error::custom("a raw JSON value that is not a string"));
        }
        self.comma();
        write_str(self.ser.out, key);
        self.ser.out.push(':');
        v.serialize(&mut *self.ser)
    }

    fn close(self, closing: &str) -> Result<(), Error> {
        if !self.raw {
            self.ser.out.push_str(closing);
        }
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close("]")
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close("]")
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close("]")
    }
}

impl ser::SerializeTupleVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.element(v)
    }
    fn end(self) -> Result<(), Error> {
        self.close("]}")
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.comma();
        key.serialize(keys::KeyWriter {
            out: &mut *self.ser.out,
        })
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> Result<(), Error> {
        self.ser.out.push(':');
        v.serialize(&mut *self.ser)
    }
    fn end(self) -> Result<(), Error> {
        self.close("}")
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.field(key, v)
    }
    fn end(self) -> Result<(), Error> {
        self.close("}")
    }
}

impl ser::SerializeStructVariant for Compound<'_, '_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        v: &T,
    ) -> Result<(), Error> {
        self.field(key, v)
    }
    fn end(self) -> Result<(), Error> {
        self.close("}}")
    }
}
