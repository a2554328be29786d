import decodeRanges from '../../decode-ranges.mjs';

export default decodeRanges('4OAAxj_7gb_4P_9B4P_9');
