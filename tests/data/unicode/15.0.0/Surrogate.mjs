import decodeRanges from '../../decode-ranges.mjs';

export default decodeRanges('4NgAwf_');
