"""The word lists behind the generators: Korean and English names, places, streets,
companies and e-mail domains. All were written for this package; none comes from an external
package, and any match with a real person is a coincidence."""

from __future__ import annotations

import numpy as np

# --------------------------------------------------------------------------------------------
# Name lists
# --------------------------------------------------------------------------------------------


def word_list(text: str) -> list[str]:
    """Split a block of white-space separated words (keeps the long lists below compact)."""
    return text.split()


# surname:romanisation:share in percent (rounded census shares, so 김 and 이 dominate).
_KO_SURNAME_TEXT = """
김:kim:21.5 이:lee:14.7 박:park:8.4 최:choi:4.7 정:jung:4.3 강:kang:2.3 조:cho:2.1 윤:yoon:2.1
장:jang:2.0 임:lim:1.7 한:han:1.5 오:oh:1.5 서:seo:1.5 신:shin:1.4 권:kwon:1.4 황:hwang:1.4
안:ahn:1.4 송:song:1.3 류:ryu:1.2 전:jeon:1.1 홍:hong:1.1 고:ko:0.9 문:moon:0.9 양:yang:0.9
손:son:0.9 배:bae:0.8 백:baek:0.8 허:heo:0.7 유:yoo:0.7 남:nam:0.6 심:shim:0.5 노:noh:0.5
하:ha:0.5 곽:kwak:0.4 성:sung:0.4 차:cha:0.4 주:joo:0.4 우:woo:0.4 구:koo:0.4 민:min:0.3
진:jin:0.3 나:na:0.3 지:ji:0.3 엄:eom:0.3 채:chae:0.3 원:won:0.3 천:cheon:0.2 방:bang:0.2
공:kong:0.2 현:hyun:0.2 함:ham:0.2 변:byun:0.2 염:yeom:0.1 여:yeo:0.1 추:choo:0.1 도:do:0.1
석:seok:0.1 선:sun:0.1 설:seol:0.1 마:ma:0.1 길:gil:0.1 연:yeon:0.1 위:wi:0.1 표:pyo:0.1
명:myung:0.1 기:ki:0.1 반:ban:0.05 왕:wang:0.05 금:keum:0.05 옥:ok:0.05 맹:maeng:0.05
제:je:0.05 모:mo:0.05 탁:tak:0.05 국:kook:0.05 남궁:namgung:0.05 황보:hwangbo:0.03
선우:sunwoo:0.03 제갈:jegal:0.02
"""

KO_MALE = word_list(
    """
민수 민준 서준 도윤 예준 시우 하준 지호 주원 지후 준우 준서 건우 현우 우진 선우 서진 연우 유준
정우 승우 승현 시윤 준혁 은우 지환 승민 지훈 유찬 윤우 민성 준영 시후 진우 수호 재윤 동현 성민
영수 영호 영철 정호 상훈 성호 성훈 재현 동욱 준호 태현 상철 광수 종훈 병철 진호 대현 형준 재민
기현 태민 민호 민재 현준 지성 우현 경민 도현 한결 태윤 민혁
"""
)

KO_FEMALE = word_list(
    """
서연 서윤 지우 서현 민서 하은 하윤 윤서 지유 지민 채원 수아 지아 지윤 은서 다은 예은 수빈 소율
예린 지은 민지 수진 지현 은지 혜진 미영 영희 순자 정숙 경희 미경 은영 현정 수연 유진 지혜 민정
소연 혜원 보람 아름 다현 예진 나연 하린 가은 유나 채은 세영 은비 소희 지수 연희 미숙 명숙 선영
은정 수정
"""
)

# Romanisation of every given-name syllable above, as people actually spell them in e-mails.
_KO_SYLLABLE_TEXT = """
민:min 수:su 준:jun 서:seo 도:do 윤:yun 예:ye 시:si 우:woo 하:ha 지:ji 호:ho 주:ju 원:won
후:hu 건:geon 현:hyun 진:jin 선:sun 연:yeon 유:yu 정:jung 승:seung 혁:hyuk 은:eun 환:hwan
훈:hoon 찬:chan 성:sung 영:young 철:chul 상:sang 재:jae 동:dong 욱:wook 태:tae 광:kwang
종:jong 병:byung 대:dae 형:hyung 기:ki 경:kyung 한:han 결:gyeol 아:a 다:da 빈:bin 소:so
율:yul 린:rin 혜:hye 미:mi 희:hee 순:soon 자:ja 숙:sook 나:na 가:ga 세:se 채:chae 비:bi
보:bo 람:ram 름:reum 명:myung 석:seok 규:kyu 식:sik 범:beom 용:yong 인:in
"""

# Most Korean given names are two syllables; these combine into many more plausible names.
KO_GIVEN_PARTS = {
    "M": (
        "민준서도지현승성재동영정상태진우건시윤형종기경대병광한주수용",
        "수준호우현민석진혁훈철욱규빈성원재환영찬식범",
    ),
    "F": (
        "서지민수하유채예은다소나가세혜미영경정현연주윤보",
        "연윤우현서은원아빈율린진희영정경숙미나인혜지수주",
    ),
}

KO_COMMON_FULL = [
    ("김", "민수", "M"),
    ("김", "지훈", "M"),
    ("이", "지은", "F"),
    ("박", "지민", "F"),
    ("이", "민호", "M"),
    ("김", "서연", "F"),
    ("최", "영호", "M"),
    ("정", "수진", "F"),
    ("김", "영희", "F"),
    ("이", "영수", "M"),
]

EN_MALE = word_list(
    """
James John Robert Michael William David Richard Joseph Thomas Charles Christopher Daniel Matthew
Anthony Mark Donald Steven Paul Andrew Joshua Kenneth Kevin Brian George Timothy Ronald Edward
Jason Jeffrey Ryan Jacob Gary Nicholas Eric Jonathan Stephen Larry Justin Scott Brandon Benjamin
Samuel Gregory Alexander Frank Patrick Raymond Jack Dennis Jerry Tyler Aaron Adam Nathan Henry
Douglas Zachary Peter Kyle Noah Ethan Jeremy Walter Christian Keith Roger Terry Austin Sean
Gerald Carl Harold Dylan Arthur Lawrence Jordan Jesse Bryan Bruce Gabriel Logan Alan Albert
Elijah Wayne Randy Vincent Mason Roy Ralph Russell Bradley Philip Eugene Oliver Harry Oscar Leo
Freddie Alfie Archie Theo Toby Lewis Callum Liam Connor Jamie Owen Rhys Luke Max Finley Stanley
Hugo Rory Reuben Frederick Alistair Graham Malcolm Nigel Trevor Colin Neil Stuart Ian Gordon
Duncan Hamish Angus Euan Fraser Ross Craig Dean Darren Barry Clive Derek Martin Simon Howard
Leonard Victor Warren Marcus Dominic Julian Felix Jasper Sebastian Rupert Giles
"""
)

EN_FEMALE = word_list(
    """
Mary Patricia Jennifer Linda Elizabeth Barbara Susan Jessica Sarah Karen Lisa Nancy Betty
Margaret Sandra Ashley Kimberly Emily Donna Michelle Carol Amanda Dorothy Melissa Deborah
Stephanie Rebecca Sharon Laura Cynthia Kathleen Amy Angela Shirley Anna Brenda Pamela Emma
Nicole Helen Samantha Katherine Christine Rachel Carolyn Janet Catherine Maria Heather Diane
Ruth Julie Olivia Joyce Virginia Victoria Kelly Lauren Christina Joan Evelyn Judith Megan Andrea
Cheryl Hannah Jacqueline Martha Gloria Teresa Ann Sara Madison Frances Kathryn Janice Jean
Abigail Alice Judy Sophia Grace Denise Amber Doris Marilyn Danielle Beverly Isabella Theresa
Diana Natalie Charlotte Marie Kayla Alexis Amelia Isla Ava Mia Poppy Freya Lily Ella Evie Ivy
Florence Rosie Willow Sienna Phoebe Harriet Imogen Eleanor Lucy Chloe Holly Zoe Gemma Kirsty
Leanne Nicola Claire Joanne Tracey Lorraine Gillian Fiona Morag Shona Ailsa Eilidh Caitlin Niamh
Siobhan Bethan Ffion Seren
"""
)

# Surnames in rough frequency order; persons() adds a few thousand compound surnames to these.
EN_SURNAMES = word_list(
    """
Smith Johnson Williams Brown Jones Taylor Davies Wilson Evans Thomas Miller Davis Roberts
Walker Wright Robinson Thompson White Hughes Edwards Green Hall Wood Harris Lewis Martin Jackson
Clarke Clark Turner Hill Scott Cooper Morris Ward Moore King Watson Baker Harrison Morgan Patel
Young Allen Mitchell James Anderson Phillips Lee Bell Parker Davidson Campbell Kelly Stewart
Murray Shaw Cook Richardson Carter Murphy Price Griffiths Bennett Gray Mason Rogers Hunt Palmer
Holmes Mills Barnes Knight Lloyd Butler Russell Barker Fisher Stevens Jenkins Dixon Fletcher
Ellis Harvey Simpson Howard Marshall Graham Pearson Reid Fox Webb Rose Chapman Matthews Gibson
Wells Powell Owen Chambers Armstrong Hudson Grant Kennedy Ross Hart Lawrence Adams Nelson Garcia
Martinez Rodriguez Hernandez Lopez Gonzalez Perez Sanchez Ramirez Torres Nguyen Flores Rivera
Gomez Diaz Cruz Reyes Morales Gutierrez Ortiz Peterson Bailey Reed Ramos Kim Cox Brooks Chavez
Mendoza Ruiz Alvarez Castillo Sanders Myers Long Foster Jimenez Perry Sullivan Coleman Henderson
Gonzales Vasquez Simmons Romero Jordan Patterson Alexander Hamilton Reynolds Griffin Wallace
Moreno West Cole Hayes Bryant Herrera Medina Aguilar Ford Castro Owens Fernandez McDonald Woods
Washington Vargas Henry Chen Freeman Tucker Guzman Burns Crawford Olson Porter Hunter Gordon
Mendez Silva Snyder Munoz Hicks Wagner Black Robertson Boyd Stone Salazar Warren Meyer Rice
Schmidt Garza Daniels Ferguson Nichols Stephens Soto Weaver Ryan Gardner Payne Dunn Spencer
Hawkins Arnold Pierce Hansen Peters Santos Bradley Elliott Cunningham Duncan Carroll Lane Riley
Andrews Ray Berry Perkins Hoffman Johnston Richards Willis Carpenter Sandoval George Rios Watkins
Greene Wheeler Harper Burke Larson Morrison Franklin Carlson Austin Carr Lawson Jacobs OBrien
Lynch Singh Vega Bishop Montgomery Oliver Jensen Williamson Gilbert Dean Sims Howell Li Wong
Hanson McCoy Garrett Burton Fuller Wang Weber Welch Lucas Fields Park Yang Little Banks Day
Walsh Bowman Fowler Brewer May Holland Newman Curtis Douglas Schneider Joseph Barrett Keller
Wade Stanley Hopkins Barnett Bates Beck Lambert Byrd Craig Lowe Frazier Powers Neal Leonard
Gregory Sutton Fleming Rhodes Norris Jennings Watts Walters Cohen Moran Parks Steele Vaughn
Becker Holt Hale Benson Haynes Horton Miles Lyons Graves Bush Thornton Wolfe Warner Mann Dawson
Page McCarthy Love Reeves Chang Klein Baldwin Simon Hardy Higgins Cummings Chandler Sharp Barber
Bowen Dennis Robbins Ramsey Francis Griffith Blair Cross Quinn Moss Swanson Chan Khan Rodgers
Fitzgerald Stevenson Manning Gill Curry McLaughlin Harmon Gross Doyle Garner Newton Burgess
Reese Walton Blake Brady Goodman Webster Goodwin Fischer Potter Todd Malone Cannon Tate Sherman
Hubbard Hodges Wolf Saunders Rowe Gallagher Farmer Hammond Hampton Townsend Ingram Barton
Maxwell Waters Logan Norman Parsons Harrington Glover Osborne Buchanan Casey Floyd Patton Ball
Tyler Bowers Cobb Gibbs Bauer Moody McGuire Hartman French Kramer Pope Norton Sparks Flynn Yates
Hogan Marsh Pratt Stokes Ballard Lang Brock Drake Cain Burnett Shepherd Lamb McKenzie Olsen
Cochran Morton Nash Wilkins Briggs Shah Roth Nicholson Holloway Flowers Hoover Short Weiss
Underwood Bass Summers Houston Carson Morrow Clayton Whitaker Collier Carey Wilcox Poole Conley
Davenport Copeland Massey Huff Cameron Hood Monroe Randall Kirk Mathis Skinner Bradford Wall
Boone Kirby Wilkinson Bridges Bruce Atkinson Vincent York Hodge Abbott Allison Gates Chase
Sweeney Farrell Wyatt Dalton Horn Barron Phelps Heath Foley Atkins Hensley Glenn Harrell Shields
Huffman Choi Boyer Garrison Bond Kane Hancock Callahan Dillon Cline Wiggins Grimes Melton Savage
Booth Koch Golden Ware Brennan McDowell Marks Humphrey Baxter Sawyer Clay Tanner Hutchinson Berg
Wiley Gilmore Russo Hobbs Keith Wilkerson Ahmed Beard McClain Walter Henson Mosley McClure
Beasley Stephenson Snow Preston Vance Barry Johns Eaton Blackwell Dyer Prince Macdonald Solomon
Stafford English Hurst Woodard Shannon Kemp Nolan McCullough Merritt Moon Strong Kline Roach
Winters Jacobson Lester Knox Bullock Kerr Leach Meadows Orr Whitehead Pruitt Kent Conway McKee
Barr Berger McIntyre Blankenship Gaines Bartlett Durham Dorsey McCall ODonnell Stein Browning
Stout Lowery Sloan McLean Hendricks Calhoun Sexton Chung Gentry Hull Ellison Nielsen Gillespie
Buck Middleton Sellers Bradshaw McIntosh Howe Livingston Frost Glass Morse Knapp Herman Stark
Noble Spears Weeks Buckley McFarland Hickman Randolph Schaefer Walls House Reilly Pennington
Conrad Crosby Fitzpatrick Donovan Mays Mahoney Valentine Raymond Hahn McMillan Small Bentley
Peck Boyle Hanna Pace Rush Hurley Harding McConnell Ayers Everett Avery Pugh Mayer Bender
Shepard McMahon Landry Case Sampson Moses Blackburn Dunlap Gould Duffy Vaughan Herring McKay
Rivers Farley Bernard Ashley Friedman Potts Costa Nixon Clements Fry Best Benton Dougherty Crane
Haley Blanchard Horne Finley Lynn Bean Dodson Mullen Hayden Levy Huber Richmond Moyer Lim Frye
Sheppard Booker Waller Woodward Krueger Rasmussen Brandt Donaldson Stuart Faulkner Maynard
Coffey Estes Sanford Burch Maddox Spence McPherson Church Schmitt Stanton Cherry Compton Dudley
Pollard Hester Proctor Hinton Novak Good Madden McCann Terrell Jarvis Dickson Cantrell Mayo
Branch Hendrix Rollins Rowland Whitney Duke Odom Daugherty Travis Tang Parry Pritchard Rees
Bevan Howells Whitfield Ashworth Heywood Holroyd Sutcliffe Pickering MacLeod Paterson Sinclair
Baird Drummond Gallacher Fraser Milne Ritchie Mackay Munro Hamill Jamieson Lindsay Kerrigan
"""
)

# Compound surnames (Ashford, Brookley, ...) are built from these parts to enlarge the pool.
EN_SURNAME_HEADS = word_list(
    """
Ash Bar Black Brad Bram Bren Brook Bur Cal Carr Chat Clay Cole Corn Cran Dal Dun Elm Fair Fal
Farn Fen Gar Glen Gold Good Grant Green Hal Ham Har Hart Hath Haw Hay Hazel Hol Horn Hunt Kent
Kir Lang Lark Lin Lock Mar Mel Mid Mill Mor New North Oak Pen Pres Rad Ram Red Rid Roth Rush Sal
Shel Sher South Stan Stock Stone Sud Sum Thorn Wal War Wel West Whit Wil Win Wood Wyn Ather Bel
Bing Bow Brom Cam Ches Cliff Cro Dar Ed Els Ever Fox Hax Ing Kel Lat Lud Nor Ox Pem Quen Ren Sel
Tad Tem Ulver Ven Wex Yar
"""
)
EN_SURNAME_TAILS = word_list(
    """
by bury combe croft dale den don field ford gate ham hurst ington land ley low man more ridge
ton well wick wood worth ston stead sby bourne brook shaw thorpe holm leigh mont ney rick ing
cott hill
"""
)

EN_COMMON_FULL = [
    ("Smith", "John", "M"),
    ("Brown", "Michael", "M"),
    ("Jones", "David", "M"),
    ("Williams", "James", "M"),
    ("Johnson", "Sarah", "F"),
    ("Davis", "Emily", "F"),
    ("Smith", "Robert", "M"),
    ("Johnson", "Mary", "F"),
    ("Taylor", "William", "M"),
    ("Wilson", "Elizabeth", "F"),
]


def _parse_ko_surnames() -> tuple[list[str], dict[str, str], np.ndarray]:
    names, roman, shares = [], {}, []
    for item in _KO_SURNAME_TEXT.split():
        hangul, latin, share = item.split(":")
        names.append(hangul)
        roman[hangul] = latin
        shares.append(float(share))
    weights = np.asarray(shares)
    return names, roman, weights / weights.sum()


KO_SURNAMES, KO_SURNAME_ROMAN, KO_SURNAME_P = _parse_ko_surnames()
KO_SYLLABLE_ROMAN = dict(item.split(":") for item in _KO_SYLLABLE_TEXT.split())


# --------------------------------------------------------------------------------------------
# Places, companies, e-mail domains
# --------------------------------------------------------------------------------------------

# (시도, short 시도, district, city column, alternative city spellings, postcode prefix,
#  landline area code, weight)
KO_REGIONS = [
    ("서울특별시", "서울", "강남구", "서울", "서울특별시|서울시", "061", "02", 3.0),
    ("서울특별시", "서울", "서초구", "서울", "서울특별시|서울시", "065", "02", 2.5),
    ("서울특별시", "서울", "송파구", "서울", "서울특별시|서울시", "056", "02", 2.5),
    ("서울특별시", "서울", "마포구", "서울", "서울특별시|서울시", "040", "02", 2.0),
    ("서울특별시", "서울", "종로구", "서울", "서울특별시|서울시", "031", "02", 1.5),
    ("서울특별시", "서울", "영등포구", "서울", "서울특별시|서울시", "072", "02", 2.0),
    ("서울특별시", "서울", "용산구", "서울", "서울특별시|서울시", "043", "02", 1.5),
    ("서울특별시", "서울", "성동구", "서울", "서울특별시|서울시", "047", "02", 1.5),
    ("서울특별시", "서울", "관악구", "서울", "서울특별시|서울시", "088", "02", 1.5),
    ("서울특별시", "서울", "노원구", "서울", "서울특별시|서울시", "017", "02", 1.5),
    ("서울특별시", "서울", "강서구", "서울", "서울특별시|서울시", "077", "02", 1.5),
    ("서울특별시", "서울", "은평구", "서울", "서울특별시|서울시", "034", "02", 1.5),
    ("부산광역시", "부산", "해운대구", "부산", "부산광역시|부산시", "480", "051", 1.5),
    ("부산광역시", "부산", "부산진구", "부산", "부산광역시|부산시", "472", "051", 1.0),
    ("부산광역시", "부산", "동래구", "부산", "부산광역시|부산시", "478", "051", 1.0),
    ("인천광역시", "인천", "연수구", "인천", "인천광역시|인천시", "219", "032", 1.0),
    ("인천광역시", "인천", "부평구", "인천", "인천광역시|인천시", "213", "032", 1.0),
    ("대구광역시", "대구", "수성구", "대구", "대구광역시|대구시", "421", "053", 1.0),
    ("대전광역시", "대전", "유성구", "대전", "대전광역시|대전시", "341", "042", 1.0),
    ("광주광역시", "광주", "북구", "광주", "광주광역시|광주시", "611", "062", 0.8),
    ("울산광역시", "울산", "남구", "울산", "울산광역시|울산시", "447", "052", 0.6),
    ("경기도", "경기", "성남시 분당구", "성남", "성남시", "135", "031", 2.0),
    ("경기도", "경기", "수원시 영통구", "수원", "수원시", "166", "031", 1.5),
    ("경기도", "경기", "고양시 일산동구", "고양", "고양시", "104", "031", 1.2),
    ("경기도", "경기", "용인시 수지구", "용인", "용인시", "168", "031", 1.2),
    ("경기도", "경기", "안양시 동안구", "안양", "안양시", "140", "031", 1.0),
    ("세종특별자치시", "세종", "", "세종", "세종시|세종특별자치시", "301", "044", 0.5),
    ("제주특별자치도", "제주", "제주시", "제주", "제주시", "632", "064", 0.5),
    ("경상남도", "경남", "창원시 성산구", "창원", "창원시", "515", "055", 0.6),
]
KO_REGION_P = np.array([r[-1] for r in KO_REGIONS]) / sum(r[-1] for r in KO_REGIONS)

KO_ROADS = word_list(
    """
테헤란로 강남대로 세종대로 을지로 종로 올림픽로 한강대로 도산대로 봉은사로 판교역로 중앙로 해운대로
센텀중앙로 월드컵로 양화로 신촌로 백범로 동일로 노해로 경인로 대학로 충장로 둔산로 대덕대로 광복로
수영로 반포대로 송파대로 영동대로 삼성로 언주로 논현로 선릉로 마포대로 통일로 문화로 번영로 평화로
"""
)
KO_APARTMENTS = word_list("래미안 자이 푸르지오 힐스테이트 아이파크 롯데캐슬 e편한세상 더샵 현대")

# UK towns: town/postcode areas/landline code/weight; the first twelve also serve customers().
_UK_TOWNS_TEXT = """
London/E N NW SE SW W/020/90; Manchester/M/0161/6; Birmingham/B/0121/11; Leeds/LS/0113/8;
Bristol/BS/0117/5; Edinburgh/EH/0131/5; Glasgow/G/0141/6; Liverpool/L/0151/5; Oxford/OX/01865/2;
Cambridge/CB/01223/2; Brighton/BN/01273/3; Cardiff/CF/029/4; Sheffield/S/0114/6;
Bradford/BD/01274/5; Leicester/LE/0116/4; Coventry/CV/024/4; Nottingham/NG/0115/3; Newcastle upon
Tyne/NE/0191/3; Hull/HU/01482/3; Stoke-on-Trent/ST/01782/3; Southampton/SO/023/3; Derby/DE/01332/3;
Portsmouth/PO/023/2; Plymouth/PL/01752/3; Reading/RG/0118/2; Northampton/NN/01604/2;
Luton/LU/01582/2; Wolverhampton/WV/01902/3; Bolton/BL/01204/3; Aberdeen/AB/01224/2;
Bournemouth/BH/01202/2; Norwich/NR/01603/2; Swindon/SN/01793/2; Swansea/SA/01792/2; Milton
Keynes/MK/01908/2; Southend-on-Sea/SS/01702/2; Middlesbrough/TS/01642/2; Sunderland/SR/0191/2;
Warrington/WA/01925/2; Huddersfield/HD/01484/2; Peterborough/PE/01733/2; Slough/SL/01753/2;
York/YO/01904/2; Belfast/BT/028/3; Ipswich/IP/01473/1; Gloucester/GL/01452/1; Exeter/EX/01392/1;
Blackpool/FY/01253/1; Dundee/DD/01382/1; Chester/CH/01244/1; Bath/BA/01225/1;
Canterbury/CT/01227/1; Lincoln/LN/01522/1; Carlisle/CA/01228/1; Inverness/IV/01463/1;
Preston/PR/01772/1; Worcester/WR/01905/1; Lancaster/LA/01524/1; Durham/DH/0191/1;
Salisbury/SP/01722/1; Truro/TR/01872/1; Hereford/HR/01432/1; Shrewsbury/SY/01743/1;
Colchester/CO/01206/1; Chelmsford/CM/01245/1; Guildford/GU/01483/1; Maidstone/ME/01622/1;
Crawley/RH/01293/1; Watford/WD/01923/1; St Albans/AL/01727/1; Harrogate/HG/01423/1;
Wakefield/WF/01924/1; Doncaster/DN/01302/1; Halifax/HX/01422/1; Kilmarnock/KA/01563/1;
Perth/PH/01738/1; Stirling/FK/01786/1; Dumfries/DG/01387/1; Kirkcaldy/KY/01592/1;
Paisley/PA/0141/1; Motherwell/ML/01698/1; Llandudno/LL/01492/1; Newport/NP/01633/1;
Telford/TF/01952/1; Walsall/WS/01922/1; Dudley/DY/01384/1; Oldham/OL/0161/1; Stockport/SK/0161/1;
Wigan/WN/01942/1; Blackburn/BB/01254/1; Twickenham/TW/020/1; Kingston upon Thames/KT/020/1;
Croydon/CR/020/1; Bromley/BR/020/1; Romford/RM/01708/1; Ilford/IG/020/1; Enfield/EN/020/1;
Harrow/HA/020/1; Uxbridge/UB/01895/1; Dartford/DA/01322/1; Sutton/SM/020/1; Tonbridge/TN/01732/1;
Hemel Hempstead/HP/01442/1; Stevenage/SG/01438/1
"""


def _parse_towns(text: str) -> list[tuple[str, str, str, int]]:
    towns = []
    for entry in text.split(";"):
        # Joining on single spaces undoes line wrapping inside names like "Newcastle upon Tyne".
        town, areas, code, weight = " ".join(entry.split()).split("/")
        towns.append((town, areas, code, int(weight)))
    return towns


UK_TOWNS = _parse_towns(_UK_TOWNS_TEXT)
N_CUSTOMER_UK_TOWNS = 12

# (city, state, ZIP prefix, area codes, alternative city spellings)
US_CITIES = [
    ("New York", "NY", "100", "212 646 917", "NYC|New York City|New York, NY"),
    ("Boston", "MA", "021", "617 857", "Boston, MA|BOSTON"),
    ("San Francisco", "CA", "941", "415 628", "SF|San Francisco, CA"),
    ("Chicago", "IL", "606", "312 773", "Chicago, IL|CHICAGO"),
    ("Seattle", "WA", "981", "206", "Seattle, WA|SEATTLE"),
    ("Austin", "TX", "787", "512 737", "Austin, TX"),
    ("Los Angeles", "CA", "900", "213 310 323", "LA|Los Angeles, CA"),
    ("Denver", "CO", "802", "303 720", "Denver, CO"),
    ("Portland", "OR", "972", "503 971", "Portland, OR"),
    ("Atlanta", "GA", "303", "404 678", "Atlanta, GA"),
]

UK_STREETS = word_list(
    """
High Station Church Park Victoria Green Manor Kings Queens Mill London Albert York Grange
Springfield Orchard Windsor Chestnut Meadow Willow Elm Beech Cedar Ash Oak Highfield Richmond
Stanley Alexandra George
"""
)
UK_SUFFIXES = word_list("Street Road Lane Avenue Close Drive Way Gardens Crescent Terrace Place")
US_STREETS = word_list(
    """
Maple Oak Pine Cedar Elm Washington Lake Hill Sunset Main Park Lincoln Jefferson Madison
Franklin Highland Jackson Ridge Spring Walnut Chestnut Willow Church Center 2nd 3rd 5th
"""
)
US_SUFFIXES = word_list("Street Avenue Boulevard Road Drive Lane Court Place")
STREET_ABBREV = {
    "Street": "St",
    "Road": "Rd",
    "Lane": "Ln",
    "Avenue": "Ave",
    "Close": "Cl",
    "Drive": "Dr",
    "Gardens": "Gdns",
    "Crescent": "Cres",
    "Terrace": "Ter",
    "Place": "Pl",
    "Boulevard": "Blvd",
    "Court": "Ct",
    "Way": "Way",
}
UK_POSTCODE_LETTERS = "ABDEFGHJLNPQRSTUWXYZ"  # the letters Royal Mail uses in the inward code

# Korean companies: (name without legal form, e-mail domain, legal form).
KO_COMPANIES = [
    ("삼성전자", "samsung.com", "주식회사"),
    ("현대자동차", "hyundai.com", "주식회사"),
    ("LG화학", "lgchem.com", "주식회사"),
    ("네이버", "navercorp.com", "주식회사"),
    ("카카오", "kakaocorp.com", "주식회사"),
    ("한빛소프트", "hanbitsoft.co.kr", "주식회사"),
    ("대한물류", "daehanlogis.co.kr", "주식회사"),
    ("서울데이터랩", "seouldatalab.co.kr", "주식회사"),
    ("한국정보통신", "kicc.co.kr", "주식회사"),
    ("푸른바이오", "pureunbio.co.kr", "주식회사"),
    ("동해해운", "donghaeshipping.co.kr", "주식회사"),
    ("새한건설", "saehancon.co.kr", "주식회사"),
    ("태평양식품", "tpfood.co.kr", "주식회사"),
    ("누리미디어", "nurimedia.co.kr", "주식회사"),
    ("미래테크", "miraetech.co.kr", "주식회사"),
    ("한울에너지", "hanulenergy.co.kr", "주식회사"),
    ("가온전자", "gaonelec.co.kr", "주식회사"),
    ("다온컴퍼니", "daon.co.kr", "유한회사"),
    ("세종정밀", "sejongprecision.co.kr", "주식회사"),
    ("우리유통", "wooridist.co.kr", "유한회사"),
    ("청담뷰티", "cheongdambeauty.co.kr", "유한회사"),
    ("바른회계컨설팅", "bareunac.co.kr", "유한회사"),
]
EN_COMPANIES = [
    ("Acme", "acme.com"),
    ("Globex", "globex.com"),
    ("Initech", "initech.com"),
    ("Northwind Traders", "northwind.com"),
    ("Blue Harbor Logistics", "blueharbor.com"),
    ("Greenfield Analytics", "greenfield-analytics.com"),
    ("Redwood Capital", "redwoodcap.com"),
    ("Summit Health", "summithealth.com"),
    ("Brightline Media", "brightline.com"),
    ("Ironbridge Engineering", "ironbridge.co.uk"),
    ("Silverline Foods", "silverlinefoods.co.uk"),
    ("Oakmont Consulting", "oakmont.com"),
    ("Kestrel Software", "kestrelsoft.com"),
    ("Harbourside Hotels", "harbourside.co.uk"),
    ("Pinecrest Retail", "pinecrest.com"),
    ("Lumen Labs", "lumenlabs.io"),
    ("Crescent Energy", "crescent-energy.com"),
    ("Falcon Freight", "falconfreight.co.uk"),
    ("Thistle Insurance", "thistle.co.uk"),
    ("Copperleaf Design", "copperleaf.co.uk"),
]
# Ways of writing each legal form; index 0 is the most common spelling.
COMPANY_STYLES = {
    "주식회사": ["(주){b}", "{b} 주식회사", "㈜{b}", "주식회사 {b}", "{b}(주)", "(주) {b}", "{b}"],
    "유한회사": ["유한회사 {b}", "{b} 유한회사", "(유){b}", "{b}"],
    "inc": ["{b} Inc.", "{B}, Inc", "{b} Incorporated", "{b}, Inc.", "{b} Inc", "{b}"],
    "llc": ["{b} LLC", "{b}, L.L.C.", "{B} LLC", "{b} L.L.C.", "{b}"],
    "corp": ["{b} Corp.", "{b} Corporation", "{B} CORP", "{b} Corp", "{b}"],
    "ltd": ["{b} Ltd", "{b} Limited", "{B} LTD.", "{b} Ltd.", "{b}"],
    "plc": ["{b} plc", "{b} PLC", "{b} Public Limited Company", "{b}"],
}

KO_MAIL_DOMAINS = ["naver.com", "gmail.com", "daum.net", "hanmail.net", "kakao.com", "nate.com"]
KO_MAIL_P = np.array([0.36, 0.26, 0.1, 0.1, 0.1, 0.08])
UK_MAIL_DOMAINS = [
    "gmail.com",
    "outlook.com",
    "hotmail.co.uk",
    "yahoo.co.uk",
    "btinternet.com",
    "icloud.com",
    "sky.com",
]
UK_MAIL_P = np.array([0.35, 0.15, 0.14, 0.12, 0.08, 0.1, 0.06])
US_MAIL_DOMAINS = ["gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com", "aol.com"]
US_MAIL_P = np.array([0.4, 0.17, 0.14, 0.1, 0.13, 0.06])
